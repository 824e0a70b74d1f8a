"""The page `pth-top serve` hands a browser: textual-serve's terminal, with nothing fetched from elsewhere.

Unlike textual-serve's own template it loads no web font from the internet (Roboto Mono comes from the
package's static folder, and the terminal starts once it has loaded, so cells are measured in the font
they are drawn in), hides the terminal's empty scrollbar (it covered the right-most column), and builds
every URL relative to the page (an SSH tunnel may use another local port).
"""

from __future__ import annotations

from html import escape

# The browser fetches nothing but the page's own origin; inline script and style are the page's own.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'none'"
)
FONT_FAMILY = "Roboto Mono"
PAGE_HEADERS = {"Content-Security-Policy": CONTENT_SECURITY_POLICY, "X-Frame-Options": "DENY",
                "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}

PAGE = """<!DOCTYPE html>
<html>
  <head>
    <meta charset="utf-8">
    <title>@TITLE@</title>
    <link rel="stylesheet" href="static/css/xterm.css">
    <script src="static/js/textual.js"></script>
    <style>
      @font-face { font-family: "@FONT@"; font-style: normal; font-weight: 100 700;
                   src: url("static/fonts/RobotoMono-VariableFont_wght.ttf") format("truetype"); }
      @font-face { font-family: "@FONT@"; font-style: italic; font-weight: 100 700;
                   src: url("static/fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype"); }
      body { background: #0c181f; margin: 0; overflow: hidden; }
      .xterm .xterm-viewport { overflow-y: hidden; }
      .dialog-container { position: absolute; width: 100vw; height: 100vh; display: flex; align-items: center;
                          justify-content: center; z-index: 10; }
      .shade { position: absolute; width: 100%; height: 100%; background: #0c181f; }
      .intro { width: 640px; height: 240px; font-size: 16px; z-index: 20; font-family: "@FONT@", monospace;
               text-align: center; color: rgba(255, 255, 255, 0.95); background-color: #12232d; display: flex;
               align-items: center; justify-content: center; margin: 32px; }
      body.-first-byte .intro-dialog { display: none; }
      body .textual-terminal { opacity: 0; }
      body.-first-byte .textual-terminal { opacity: 1; }
      body button { padding: 16px 32px; background-color: #5e0ba7; color: rgba(255, 255, 255, 0.95); border: none;
                    font-family: "@FONT@", monospace; margin: 16px; display: block; cursor: pointer; }
      .closed-dialog { display: none; }
      body.-closed .closed-dialog { display: flex; }
    </style>
  </head>
  <body>
    <div class="dialog-container intro-dialog"><div class="shade"></div><div class="intro">@TITLE@</div></div>
    <div class="dialog-container closed-dialog"><div class="shade"></div>
      <div class="intro"><div>Session ended.</div><button type="button" id="restart">Restart</button></div></div>
    <div id="terminal" class="textual-terminal" data-font-size="@FONT_SIZE@"></div>
    <script>
      const socketUrl = new URL("@SOCKET_PATH@", window.location.href);
      socketUrl.protocol = socketUrl.protocol === "https:" ? "wss:" : "ws:";
      document.getElementById("terminal").dataset.sessionWebsocketUrl = socketUrl.href;
      document.getElementById("restart").onclick = () => window.location.reload();
      const startTerminal = window.onload;
      window.onload = (event) => {
        document.fonts.load('@FONT_SIZE@px "@FONT@"').catch(() => null).then(() => startTerminal(event));
      };
    </script>
  </body>
</html>
"""


def page_html(title: str, socket_path: str, font_size: int) -> str:
    """The page, its websocket at `socket_path` relative to the page (a token may be part of it)."""
    fields = {"@TITLE@": escape(title), "@FONT@": FONT_FAMILY, "@FONT_SIZE@": str(font_size),
              "@SOCKET_PATH@": escape(socket_path)}
    html = PAGE
    for field, value in fields.items():
        html = html.replace(field, value)
    return html
