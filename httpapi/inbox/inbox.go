package inbox

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/countersign/countersign/domain"
)

//go:embed assets
var assets embed.FS

// Prefix is where the assets other than the page are served.
const Prefix = "/inbox/"

// Mux is what Mount needs of a router (net/http's ServeMux).
type Mux interface {
	Handle(pattern string, h http.Handler)
}

// Mount serves the page at "GET /" (exactly), at "GET /inbox/{id}" (one
// request's own address, id a request id) and at "GET /inbox/policy" (the
// admins' policy replay), and its assets below "GET /inbox/". Other paths
// stay the router's.
func Mount(m Mux) {
	h := Handler()
	m.Handle("GET /{$}", h)
	m.Handle("GET "+Prefix, h)
}

// file is one embedded asset, ready to serve.
type file struct {
	name  string
	ctype string
	etag  string
	body  []byte
}

// contentTypes lists the only kinds of file served; anything else in the
// assets directory is not served.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// PolicyPage is the name below Prefix of the admins' policy replay page.
const PolicyPage = "policy"

// Handler serves the page at "/", at Prefix+id (a request id: the page
// opens that request) and at Prefix+PolicyPage (the page opens the policy
// replay), and the assets at Prefix+name, each with the security headers
// (SecurityHeaders); any other path is 404.
func Handler() http.Handler {
	files := load()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SecurityHeaders(w.Header())
		name := strings.TrimPrefix(r.URL.Path, Prefix)
		page := r.URL.Path == "/" || r.URL.Path == Prefix+PolicyPage || strings.HasPrefix(name, "req_") && domain.ValidGeneratedID(name)
		if page {
			name = "index.html"
		}
		f, ok := files[name]
		if !ok || name == "index.html" && !page {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f.ctype)
		w.Header().Set("ETag", f.etag)
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.body))
	})
}

// load reads the embedded assets once. A file the binary embeds but
// cannot read is a build error, so it panics.
func load() map[string]file {
	files := map[string]file{}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		ctype, ok := contentTypes[path.Ext(p)]
		if err != nil || d.IsDir() || !ok {
			return err
		}
		body, err := assets.ReadFile(p)
		sum := sha256.Sum256(body)
		name := strings.TrimPrefix(p, "assets/")
		files[name] = file{name: name, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, body: body}
		return err
	})
	if err != nil {
		panic("inbox: embedded assets: " + err.Error())
	}
	return files
}
