package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"

	"github.com/countersign/countersign/display"
	"github.com/countersign/countersign/domain"
)

// pageStyle is the decision page's only style; the CSP allows exactly it.
const pageStyle = `body{font-family:system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;line-height:1.4}
pre{background:#f4f4f4;padding:.75rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
blockquote{border-left:4px solid #999;margin:0;padding:.25rem .75rem;color:#333}
.why{padding:.75rem;border:1px solid #c33;background:#fee}.ok{padding:.75rem;border:1px solid #3a3;background:#efe}
button{font-size:1.1rem;padding:.5rem 1.25rem}dt{font-weight:bold}`

// pageCSP forbids every script, plugin and frame; the form posts only
// back here.
var pageCSP = "default-src 'none'; style-src 'sha256-" + styleHash() + "'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func styleHash() string {
	h := sha256.Sum256([]byte(pageStyle))
	return base64.StdEncoding.EncodeToString(h[:])
}

// linkPage is what GET and POST /d/{token} show. Every value is data that
// html/template escapes; what the agent wrote is shown by package display
// (control, format and bidi characters as visible escapes, look-alike
// words marked).
type linkPage struct {
	Title    string
	Why      string // set: the link changes nothing, and this says why
	Done     string // set: the answer was taken
	Decision string // allow | deny, for the form
	Request  *domain.Request
	For      string // the person the link answers for, by name
	Quorum   string // a group's request: "1 of 2 approved (person …)"
	Style    template.CSS
}

var linkTemplate = template.Must(template.New("link").Funcs(template.FuncMap{"visible": display.Text, "args": linkArgs}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>{{.Title}}</title><style>{{.Style}}</style></head><body>
<h1>{{.Title}}</h1>
{{with .Why}}<p class="why">{{.}}</p>{{end}}
{{with .Done}}<p class="ok">{{.}}</p>{{end}}
{{with .For}}<p>This link answers for {{.}}.</p>{{end}}
{{with .Request}}<dl>
<dt>Request</dt><dd>{{.ID}} (revision {{.Revision}})</dd>
<dt>Capability</dt><dd><code>{{visible .Capability.String}}</code></dd>
<dt>Agent</dt><dd>{{visible (print .Agent)}}{{if .Chain}} (chain: {{range $i, $a := .Chain}}{{if $i}} → {{end}}{{visible (print $a)}}{{end}}){{end}}</dd>
<dt>Status</dt><dd>{{.Status}}{{with $.Quorum}}: {{.}}{{end}}</dd>
<dt>Deadline</dt><dd>{{.DeadlineAt.UTC.Format "2006-01-02 15:04:05Z"}}</dd>
</dl>
<h2>Arguments, exactly as stored</h2><pre>{{args .Arguments}}</pre>
{{if .Reason}}<h2>The agent's reason (its words, not an instruction)</h2><blockquote>{{visible .Reason}}</blockquote>{{end}}
{{end}}
{{if and .Decision (not .Why) (not .Done)}}<form method="post"><button type="submit">{{if eq .Decision "allow"}}Approve this call once{{else}}Deny this call{{end}}</button></form>
<p>Nothing is decided until you press the button.</p>{{end}}
</body></html>
`))

func linkArgs(raw json.RawMessage) string { return display.JSON(raw, "") }

// writeLinkPage writes p with the page's security headers.
func writeLinkPage(w http.ResponseWriter, status int, p linkPage) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer") // the token is in the URL
	h.Set("Cache-Control", "no-store")
	p.Style = template.CSS(pageStyle)
	var b bytes.Buffer
	if err := linkTemplate.Execute(&b, p); err != nil {
		http.Error(w, "page failed", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
