// Package config loads countersign.yaml (SPEC §10): the server's own
// settings and the tenants with their members, agents, tokens, rules and
// judge. It validates everything before anything starts — ids, parents
// (no cycles, one member per chain), tokens, scopes, durations — and every
// error names the line of the file it is about. It also holds the demo
// configuration used when there is no file.
package config
