package broker

import (
	"context"
	"testing"
)

// SPEC §9: the embedded server fsyncs every write. NATS' default syncs
// every two minutes; a machine crash would then lose acknowledged writes.
func TestEmbeddedSyncsAlways(t *testing.T) {
	if !EmbeddedOptions(t.TempDir()).SyncAlways {
		t.Fatal("EmbeddedOptions must set SyncAlways")
	}
	b, err := Start(context.Background(), Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if cfg := b.Server.JetStreamConfig(); cfg == nil || !cfg.SyncAlways {
		t.Fatalf("running server's JetStream config = %+v, want SyncAlways", cfg)
	}
	if err := b.Ready(context.Background()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
}
