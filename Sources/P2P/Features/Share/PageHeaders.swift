import Crypto
import Foundation

/// The headers of a self-contained page served to browsers (`SharePage`, `WebUploadPage`): no caching, no
/// sniffing, no referrer, and a content security policy that lets only the page's own inline script run
/// (named by its SHA-256), its inline style apply, and requests go to this server alone.
enum PageHeaders {
    /// What both pages' scripts start with: strict mode, the API's path, a lookup and a size in KiB/MiB.
    static let scriptPrelude = """
        "use strict";
        const api = "/api/localsend/v2/";
        const $ = (id) => document.getElementById(id);
        function size(bytes) {
          const units = ["B", "KiB", "MiB", "GiB", "TiB"];
          let value = bytes, unit = 0;
          while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
          return unit === 0 ? bytes + " B" : value.toFixed(1) + " " + units[unit];
        }
        """

    static func headers(script: String) -> [(String, String)] {
        [("Content-Type", "text/html; charset=utf-8"),
         ("Cache-Control", "no-store"),
         ("X-Content-Type-Options", "nosniff"),
         ("Referrer-Policy", "no-referrer"),
         ("Content-Security-Policy", contentSecurityPolicy(script: script))]
    }

    static func contentSecurityPolicy(script: String) -> String {
        let hash = Data(SHA256.hash(data: Data(script.utf8))).base64EncodedString()
        return "default-src 'none'; script-src 'sha256-\(hash)'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    }

    /// The style both pages share: readable on a phone, nothing loaded from elsewhere.
    static let style = """
        body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; padding: 1rem; background: #f6f7f9; color: #1b1f24; }
        main { max-width: 40rem; margin: 0 auto; }
        h1 { font-size: 1.4rem; margin: 0.5rem 0 1rem; }
        form, section { background: #fff; border-radius: 0.75rem; padding: 1rem; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
        label { display: block; margin: 0.5rem 0; }
        input { font-size: 1.4rem; width: 100%; box-sizing: border-box; padding: 0.6rem; border: 1px solid #9aa4b1; border-radius: 0.5rem; }
        input[type=text] { letter-spacing: 0.2em; }
        input[type=file] { font-size: 1rem; }
        button { font-size: 1.1rem; margin-top: 0.75rem; width: 100%; padding: 0.7rem; border: 0; border-radius: 0.5rem; background: #1f6feb; color: #fff; }
        button:disabled { background: #9aa4b1; }
        #error { color: #b42318; min-height: 1.5em; margin: 0.5rem 0 0; }
        #status { color: #1a7f37; margin: 0.5rem 0 0; }
        ul { list-style: none; padding: 0; margin: 0; }
        li { display: flex; justify-content: space-between; gap: 1rem; padding: 0.7rem 0; border-bottom: 1px solid #e3e6ea; }
        li:last-child { border-bottom: 0; }
        li a { color: #1f6feb; word-break: break-all; text-decoration: none; }
        .size { color: #57606a; white-space: nowrap; }
        [hidden] { display: none !important; }
        """
}
