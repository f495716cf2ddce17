// Package oidctest runs a real OpenID provider in-process for tests: the
// op package of github.com/zitadel/oidc/v3 over its example in-memory
// storage (discovery, JWKS, authorization code with PKCE, the device
// authorization grant), with a login form, rotatable signing keys and a
// switch that replaces the ID token of the next token answers, so that
// tests can play a forging provider. Tests only: nothing in the binary
// imports it.
package oidctest
