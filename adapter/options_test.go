package adapter_test

import (
	"testing"
	"time"

	"github.com/countersign/countersign/adapter"
)

// Every duration option refuses a value that is not positive, and New
// says so instead of building a client that never waits.
func TestDurationOptionsMustBePositive(t *testing.T) {
	for name, opt := range map[string]func(time.Duration) adapter.Option{
		"request timeout": adapter.WithRequestTimeout,
		"cancel timeout":  adapter.WithCancelTimeout,
	} {
		if _, err := adapter.New("http://127.0.0.1:1", "tok", opt(0)); err == nil {
			t.Errorf("%s 0: no error", name)
		}
		if _, err := adapter.New("http://127.0.0.1:1", "tok", opt(-time.Second)); err == nil {
			t.Errorf("%s -1s: no error", name)
		}
		if _, err := adapter.New("http://127.0.0.1:1", "tok", opt(time.Second)); err != nil {
			t.Errorf("%s 1s: %v", name, err)
		}
	}
}
