package httpapi

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3.1 document of this API, served at
// GET /v1/openapi.json without a token. TestOpenAPIMatchesResponses
// checks real responses against it.
//
//go:embed openapi.json
var openAPI []byte

func (a *API) openapi(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(openAPI)
	return err
}
