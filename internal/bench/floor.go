package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// The floor (Options.Floor): the smallest HTTP service that does a
// scenario's durable work and nothing else, driven by the same load as
// countersign, so that a ratio to it is reproducible in one command. No
// auth, no events, no outbox, no audit log: an embedded nats-server with
// JetStream syncing every write (sync_interval: always, as countersign's
// embedded server), one KV bucket, and
//
//   - grant: POST /v1/requests reads a grant (one KV get) and creates the
//     request decided (one durable KV create), answering 201 with the
//     decision;
//   - person: POST /v1/requests creates it pending (one durable KV
//     create); the decider's POST /v1/requests/{id} is one durable
//     compare-and-set; GET /v1/requests/{id}?wait= long-polls on one
//     shared KV watcher that keeps decided keys in memory.
//
// Its records have about the size of countersign's small ones.
var (
	floorPending       = []byte(`{"status":"pending","agent":"agt_main","tool":"bench_email","arguments":{"n":1},"approver":{"kind":"person","id":"u-1"},"created_at":"2026-01-01T00:00:00Z","timeout":"5m","reason":"a bench request of about the size of a small record","padding":"................................................................................................"}`)
	floorDecided       = []byte(`{"status":"approved","agent":"agt_main","tool":"bench_email","arguments":{"n":1},"approver":{"kind":"person","id":"u-1"},"decision":{"by":{"kind":"person","id":"u-1"},"at":"2026-01-01T00:00:01Z"},"timeout":"5m","padding":"..........................................................................."}`)
	floorDecidedPrefix = []byte(`{"status":"approved"`)
)

// floorScenarios are the scenarios the floor can serve.
var floorScenarios = map[string]scenario{"grant": grantScenario, "person": personScenario}

// runFloor runs o.Scenario against the floor service.
func runFloor(ctx context.Context, o Options) (Result, error) {
	fn, ok := floorScenarios[o.Scenario]
	if !ok {
		return Result{}, fmt.Errorf("bench: no floor for scenario %q (grant, person)", o.Scenario)
	}
	if o.URL != "" {
		return Result{}, errors.New("bench: the floor runs in-process: --floor without --url")
	}
	f, err := startFloor(ctx)
	if err != nil {
		return Result{}, err
	}
	defer f.close()
	o.URL = f.url
	res, err := fn(ctx, o)
	res.Audit = ""
	return res, err
}

type floor struct {
	url   string
	srv   *http.Server
	ns    *server.Server
	nc    *nats.Conn
	dir   string
	watch jetstream.KeyWatcher
}

func (f *floor) close() {
	if f.srv != nil {
		_ = f.srv.Close()
	}
	if f.watch != nil {
		_ = f.watch.Stop()
	}
	if f.nc != nil {
		f.nc.Close()
	}
	if f.ns != nil {
		f.ns.Shutdown()
		f.ns.WaitForShutdown()
	}
	_ = os.RemoveAll(f.dir)
}

func startFloor(ctx context.Context) (f *floor, err error) {
	f = &floor{}
	defer func() {
		if err != nil {
			f.close()
		}
	}()
	if f.dir, err = os.MkdirTemp("", "countersign-floor-"); err != nil {
		return nil, err
	}
	f.ns, err = server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: f.dir, NoLog: true, NoSigs: true, SyncAlways: true})
	if err != nil {
		return nil, err
	}
	f.ns.Start()
	if !f.ns.ReadyForConnections(15 * time.Second) {
		return nil, errors.New("bench: the floor's nats-server did not start")
	}
	if f.nc, err = nats.Connect(f.ns.ClientURL(), nats.MaxReconnects(0)); err != nil {
		return nil, err
	}
	js, err := jetstream.New(f.nc)
	if err != nil {
		return nil, err
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "approvals", History: 1})
	if err != nil {
		return nil, err
	}
	gkv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "grants", History: 1})
	if err != nil {
		return nil, err
	}
	if _, err := gkv.Put(ctx, "agt_programmer."+benchTool, []byte(`{"allow":true}`)); err != nil {
		return nil, err
	}
	// One shared watcher keeps the decided keys in memory (as a read
	// mirror would), so a poll costs no round trip to the server.
	var waiters, decided, revs sync.Map // key -> chan struct{}; key -> struct{}; id -> KV revision
	if f.watch, err = kv.Watch(context.Background(), "req.>", jetstream.UpdatesOnly()); err != nil {
		return nil, err
	}
	go func() {
		for e := range f.watch.Updates() {
			if e == nil || !bytes.HasPrefix(e.Value(), floorDecidedPrefix) {
				continue
			}
			decided.Store(e.Key(), struct{}{})
			if ch, ok := waiters.Load(e.Key()); ok {
				select {
				case ch.(chan struct{}) <- struct{}{}:
				default:
				}
			}
		}
	}()
	answer := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/requests", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := nuid.Next()
		if req.Tool == benchTool { // grant: a grant read, the request created decided
			if _, err := gkv.Get(r.Context(), "agt_programmer."+req.Tool); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			if _, err := kv.Create(r.Context(), "req."+id, floorDecided); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			answer(w, http.StatusCreated, map[string]any{"id": id, "status": "approved", "revision": 0,
				"decision": map[string]any{"by": map[string]string{"kind": "grant", "id": "grt_floor"}}})
			return
		}
		rev, err := kv.Create(r.Context(), "req."+id, floorPending)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		revs.Store(id, rev)
		answer(w, http.StatusCreated, map[string]any{"id": id, "status": "pending", "revision": 0})
	})
	mux.HandleFunc("POST /v1/requests/{id}", func(w http.ResponseWriter, r *http.Request) {
		var ans struct {
			Expected uint64 `json:"expected"`
			Decision string `json:"decision"`
		}
		if err := json.NewDecoder(r.Body).Decode(&ans); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := r.PathValue("id")
		rev, ok := revs.LoadAndDelete(id) // the record's revision ans.Expected is this KV revision
		if !ok || ans.Expected != 0 {
			http.Error(w, "not pending at that revision", http.StatusConflict)
			return
		}
		if _, err := kv.Update(r.Context(), "req."+id, floorDecided, rev.(uint64)); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		answer(w, http.StatusOK, map[string]any{"id": id, "status": "approved", "revision": 1})
	})
	mux.HandleFunc("GET /v1/requests/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		key := "req." + id
		ch := make(chan struct{}, 1)
		waiters.Store(key, ch)
		defer waiters.Delete(key)
		defer decided.Delete(key)
		if _, done := decided.Load(key); !done {
			wait, err := time.ParseDuration(r.URL.Query().Get("wait"))
			if err != nil {
				wait = 0
			}
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-ch:
			case <-t.C:
				answer(w, http.StatusOK, map[string]any{"id": id, "status": "pending", "revision": 0})
				return
			case <-r.Context().Done():
				return
			}
		}
		answer(w, http.StatusOK, map[string]any{"id": id, "status": "approved", "revision": 1})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.srv.Serve(ln) }()
	f.url = "http://" + ln.Addr().String()
	return f, nil
}

// floorNote names the floor's work in a printed figure.
func floorNote(scenario string) string {
	switch scenario {
	case "grant":
		return "HTTP + one KV get + one fsync'd KV create"
	case "person":
		return "HTTP + fsync'd KV create + CAS + shared watch"
	}
	return strconv.Quote(scenario)
}
