package views

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/views/pack"
)

// A packed terminal request is decoded through a pooled buffer: it costs
// the allocations of decoding its stored JSON and nothing more (a page of
// 50 terminal requests once allocated a buffer per record).
func TestDecodePackedAllocatesNoBuffer(t *testing.T) {
	raw := benchTerminal(t)
	var p pack.Packer
	z, release := p.Pack(raw)
	kept := p.Keep(z)
	release()
	var want domain.Request
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	var got domain.Request
	if err := decodePacked(&p, kept, &got); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v (%v), want %+v", got, err, want)
	}
	decode := testing.AllocsPerRun(100, func() { var r domain.Request; _ = json.Unmarshal(raw, &r) })
	packed := testing.AllocsPerRun(100, func() { var r domain.Request; _ = decodePacked(&p, kept, &r) })
	if packed > decode {
		t.Errorf("decoding a packed request: %.0f allocations, decoding its JSON: %.0f", packed, decode)
	}
}
