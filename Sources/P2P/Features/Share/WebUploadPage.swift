/// The page `p2p receive --web` serves at `/`: one self-contained HTML document (inline style and a small
/// inline script, nothing fetched from elsewhere) from which a browser sends files with the PIN through
/// LocalSend's upload API: `prepare-upload` (the receiver's question: the request waits for the answer),
/// then one `upload` per accepted file, its bytes streamed from the browser's disk, with progress.
public enum WebUploadPage {
    /// The headers the page is served with (`PageHeaders`: only this page's own script may run).
    public static let headers: [(String, String)] = PageHeaders.headers(script: script)

    /// The document.
    public static let html: String = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>p2p receive</title>
        <style>
        \(PageHeaders.style)
        </style>
        </head>
        <body>
        <main>
        <h1>Send files to this computer</h1>
        <noscript><p>This page needs JavaScript (a few lines, served by this device) to send files.</p></noscript>
        <form id="send-form">
        <label for="files">Files</label>
        <input id="files" name="files" type="file" multiple required>
        <label for="pin">PIN shown by the receiver</label>
        <input id="pin" name="pin" type="text" inputmode="numeric" autocomplete="off" autocapitalize="off" spellcheck="false" required>
        <button id="send" type="submit">Send</button>
        <p id="error" role="alert"></p>
        <p id="status" role="status"></p>
        </form>
        </main>
        <script>\(script)</script>
        </body>
        </html>
        """

    /// The page's behaviour.
    static let script = """

        \(PageHeaders.scriptPrelude)
        function system() {
          const agent = navigator.userAgent;
          for (const name of ["Android", "iPhone", "iPad", "Windows", "Mac", "Linux"]) { if (agent.includes(name)) { return name; } }
          return "Browser";
        }
        function fingerprint() {
          const bytes = new Uint8Array(16);
          crypto.getRandomValues(bytes);
          return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
        }
        const why = {
          401: "Wrong PIN. Check the PIN the receiver's terminal shows.",
          403: "The receiver declined.",
          409: "The receiver is busy with another sender. Try again in a moment.",
          413: "Too many files at once.",
          429: "Too many wrong PINs from this device. Wait a minute, then try again.",
          507: "The receiver does not have the space for these files."
        };
        function upload(query, file, done) {
          return new Promise((resolve, reject) => {
            const request = new XMLHttpRequest();
            request.open("POST", api + "upload?" + query);
            request.upload.onprogress = (event) => done(event.loaded);
            request.onload = () => request.status === 200 ? resolve() : reject(new Error(why[request.status] || ("The receiver answered " + request.status + ".")));
            request.onerror = () => reject(new Error("The connection to the receiver broke."));
            request.send(file);
          });
        }
        $("send-form").addEventListener("submit", async (event) => {
          event.preventDefault();
          const chosen = Array.from($("files").files);
          $("error").textContent = "";
          $("send").disabled = true;
          try {
            const files = {};
            chosen.forEach((file, index) => {
              files["f" + index] = { id: "f" + index, fileName: file.name, size: file.size, fileType: file.type || "application/octet-stream" };
            });
            const info = { alias: system() + " browser", version: "2.2", deviceModel: system(), deviceType: "web",
                           fingerprint: fingerprint(), protocol: "http", download: false };
            $("status").textContent = "Waiting for the receiver to accept…";
            const response = await fetch(api + "prepare-upload?pin=" + encodeURIComponent($("pin").value), {
              method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ info: info, files: files })
            });
            if (response.status === 204) { $("status").textContent = "Done: nothing needed to be sent."; return; }
            if (!response.ok) { throw new Error(why[response.status] || ("The receiver answered " + response.status + ".")); }
            const session = await response.json();
            const accepted = chosen.map((file, index) => [file, "f" + index]).filter(([, id]) => session.files[id]);
            const total = accepted.reduce((sum, [file]) => sum + file.size, 0);
            let sent = 0, count = 0;
            for (const [file, id] of accepted) {
              const query = "sessionId=" + encodeURIComponent(session.sessionId) + "&fileId=" + encodeURIComponent(id) + "&token=" + encodeURIComponent(session.files[id]);
              await upload(query, file, (loaded) => {
                $("status").textContent = "Sending " + (count + 1) + " of " + accepted.length + ": " + size(sent + loaded) + " of " + size(total);
              });
              sent += file.size;
              count += 1;
            }
            const left = chosen.length - accepted.length;
            $("status").textContent = "Sent " + count + (count === 1 ? " file" : " files") + " (" + size(total) + ")." + (left > 0 ? " The receiver did not take " + left + "." : "");
          } catch (error) {
            $("status").textContent = "";
            $("error").textContent = error.message;
          } finally {
            $("send").disabled = false;
          }
        });

        """
}
