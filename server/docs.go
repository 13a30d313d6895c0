package server

import (
	"embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// The API reference at /docs: Redoc's standalone bundle (redoc 2.5.2 from npm, MIT, see
// docs/redoc.LICENSE) renders /v1/openapi.json, the same embedded description, in the browser.
// Everything is served from the binary; the Content-Security-Policy lets the page reach nothing
// but this origin.

//go:embed docs/redoc.standalone.js docs/redoc.LICENSE docs/redoc.standalone.js.LICENSE.txt
var docsFS embed.FS

// docsCSP: scripts only from this origin (no inline script); Redoc injects its styles
// (styled-components), so inline styles are allowed; its search index runs in a worker made
// from a blob; the description is fetched from this origin.
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const docsHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Messaging Gateway API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<div id="redoc"></div>
<script src="/docs/redoc.standalone.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`

const docsInit = `Redoc.init("/v1/openapi.json", {
  expandResponses: "200",
  hideHostname: false,
  jsonSampleExpandLevel: 3,
  pathInMiddlePanel: true,
  theme: { typography: { fontFamily: "system-ui, sans-serif", headings: { fontFamily: "system-ui, sans-serif" } } }
}, document.getElementById("redoc"));
`

func (s *Server) docsRoutes(e *echo.Echo) {
	asset := func(name, ctype string) echo.HandlerFunc {
		return func(c echo.Context) error {
			b, err := docsFS.ReadFile("docs/" + name)
			if err != nil {
				return err
			}
			docsHeaders(c)
			return c.Blob(http.StatusOK, ctype, b)
		}
	}
	e.GET("/docs", func(c echo.Context) error {
		docsHeaders(c)
		return c.HTML(http.StatusOK, docsHTML)
	})
	e.GET("/docs/init.js", func(c echo.Context) error {
		docsHeaders(c)
		return c.Blob(http.StatusOK, "text/javascript; charset=utf-8", []byte(docsInit))
	})
	e.GET("/docs/redoc.standalone.js", asset("redoc.standalone.js", "text/javascript; charset=utf-8"))
	e.GET("/docs/redoc.LICENSE", asset("redoc.LICENSE", "text/plain; charset=utf-8"))
	e.GET("/docs/redoc.standalone.js.LICENSE.txt", asset("redoc.standalone.js.LICENSE.txt", "text/plain; charset=utf-8"))
}

func docsHeaders(c echo.Context) {
	h := c.Response().Header()
	h.Set("Content-Security-Policy", docsCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
}
