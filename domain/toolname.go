package domain

import "fmt"

// MaxToolName bounds a tool name (SPEC §5).
const MaxToolName = 128

// CheckToolName refuses a tool name that is not 1–MaxToolName bytes of
// letters, digits and "_.:/@-" (SPEC §5): a name is shown to people
// (Slack, links, the inbox) and matched by patterns, so it carries no
// markup, spaces or look-alike letters. The error says why, without a
// field.
func CheckToolName(name string) error {
	if len(name) == 0 || len(name) > MaxToolName {
		return fmt.Errorf("a tool name is 1 to %d bytes", MaxToolName)
	}
	for i := range len(name) {
		if c := name[i]; !toolNameByte[c] {
			return fmt.Errorf("a tool name is letters, digits and _ . : / @ - (byte %d is %q)", i, c)
		}
	}
	return nil
}

// toolNameByte holds the bytes a tool name may use.
var toolNameByte = func() (t [256]bool) {
	for _, r := range "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/@-" {
		t[r] = true
	}
	return t
}()
