/// The live team page served at `/` (docs/http-api.md, "The live page"): plain HTML, CSS and
/// JavaScript, embedded in the binary as string literals — a Pi in a gym has no internet (no CDN),
/// and `healthgate` is installed as one file (no resource bundle beside it). The page holds no
/// data: it asks for a token once and reads everything through the API with it.
package enum LivePage {
    /// One asset: its path under the server's root, media type and text.
    package struct Asset: Sendable {
        /// The path it is served at (`/`, `/live.css`, `/live.js`).
        package let path: String
        /// Its `Content-Type`.
        package let contentType: String
        /// Its text.
        package let text: String
    }

    /// Every asset of the page.
    package static let assets: [Asset] = [
        Asset(path: "/", contentType: "text/html; charset=utf-8", text: html),
        Asset(path: "/live.css", contentType: "text/css; charset=utf-8", text: css),
        Asset(path: "/live.js", contentType: "text/javascript; charset=utf-8", text: script),
    ]

    /// The policy the page is served with: nothing but this server's own scripts, styles and API
    /// (no inline script, no other origin).
    package static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}
