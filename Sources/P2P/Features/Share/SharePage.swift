/// The page `p2p share` serves at `/`: one self-contained HTML document (inline style and a small inline
/// script, nothing fetched from elsewhere, so a phone on a LAN without internet gets it whole) that asks
/// for the PIN, lists the files with their sizes through the LocalSend download API and downloads them.
public enum SharePage {
    /// The headers the page is served with (`PageHeaders`: only this page's own script may run).
    public static let headers: [(String, String)] = PageHeaders.headers(script: script)

    /// The policy naming the inline script by its SHA-256.
    public static var contentSecurityPolicy: String { PageHeaders.contentSecurityPolicy(script: script) }

    /// The document.
    public static let html: String = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>p2p share</title>
        <style>
        \(PageHeaders.style)
        </style>
        </head>
        <body>
        <main>
        <h1 id="title">p2p share</h1>
        <noscript><p>This page needs JavaScript (a few lines, served by this device) to ask for the PIN.</p></noscript>
        <form id="pin-form">
        <label for="pin">PIN shown by the sender</label>
        <input id="pin" name="pin" type="text" inputmode="numeric" autocomplete="off" autocapitalize="off" spellcheck="false" autofocus required>
        <button id="open" type="submit">Show files</button>
        <p id="error" role="alert"></p>
        </form>
        <section id="files" hidden>
        <ul id="list"></ul>
        <button id="all" type="button">Download all</button>
        </section>
        </main>
        <script>\(script)</script>
        </body>
        </html>
        """

    /// The page's behaviour: POST prepare-download with the PIN (or the session kept from before a reload),
    /// then a download link per file.
    static let script = """

        \(PageHeaders.scriptPrelude)
        function show(answer) {
          sessionStorage.setItem("sessionId", answer.sessionId);
          if (answer.info && answer.info.alias) { $("title").textContent = "Files from " + answer.info.alias; }
          const list = $("list");
          list.textContent = "";
          for (const file of Object.values(answer.files)) {
            const item = document.createElement("li");
            const link = document.createElement("a");
            link.href = api + "download?sessionId=" + encodeURIComponent(answer.sessionId) + "&fileId=" + encodeURIComponent(file.id);
            link.textContent = file.fileName;
            link.className = "file";
            link.download = "";
            const bytes = document.createElement("span");
            bytes.className = "size";
            bytes.textContent = size(file.size);
            item.append(link, bytes);
            list.append(item);
          }
          $("pin-form").hidden = true;
          $("files").hidden = false;
        }
        async function prepare(query) {
          const response = await fetch(api + "prepare-download?" + query, { method: "POST" });
          if (response.ok) { show(await response.json()); return ""; }
          if (response.status === 401) { return "Wrong PIN. Check the PIN the sender's terminal shows."; }
          if (response.status === 429) { return "Too many wrong PINs from this device. Wait a minute, then try again."; }
          return "The sender answered " + response.status + ". Try again.";
        }
        $("pin-form").addEventListener("submit", async (event) => {
          event.preventDefault();
          $("error").textContent = "";
          try {
            $("error").textContent = await prepare("pin=" + encodeURIComponent($("pin").value));
          } catch (error) {
            $("error").textContent = "The sender cannot be reached: " + error.message;
          }
        });
        $("all").addEventListener("click", () => {
          const links = Array.from(document.querySelectorAll("a.file"));
          links.forEach((link, index) => setTimeout(() => link.click(), index * 400));
        });
        const kept = sessionStorage.getItem("sessionId");
        if (kept) { prepare("sessionId=" + encodeURIComponent(kept)).catch(() => {}); }

        """
}
