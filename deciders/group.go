package deciders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/countersign/countersign/views"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// BucketDeciders holds one key per live deciders process, put again every
// third of its TTL; a key a process stops putting ages out (with a purge
// marker every watcher sees), and a process that stops cleanly deletes its
// own.
const BucketDeciders = "deciders"

// DefaultGroupTTL is how long a deciders process that stops putting its key
// (killed, cut off) still counts as live: its deadlines are armed in
// another process at most this long, plus the server's expiry sweep, after
// it died.
const DefaultGroupTTL = 10 * time.Second

// Group is the deciders processes alive on one NATS, discovered through
// BucketDeciders. Each request key is owned by one member, by rendezvous
// hashing over the live members, so a member leaving moves only its own
// share and a member joining takes only its own. A member always counts
// itself live: while the views of the members differ (a moment, until their
// watchers deliver the same changes), a key may be owned by two members,
// never by none for longer than that.
type Group struct {
	kv     jetstream.KeyValue
	nc     *nats.Conn
	self   string
	ttl    time.Duration
	log    *slog.Logger
	mirror *views.Mirror[member]

	refreshing sync.Mutex // one refresh at a time, so an older view never overwrites a newer
	mu         sync.RWMutex
	members    []string // live, sorted, self among them
	changed    []func()
}

// member is a process's key's value: when it last said it was live, by its
// own system clock.
type member struct {
	At time.Time `json:"at"`
}

// GroupConfig wires a Group.
type GroupConfig struct {
	JS       jetstream.JetStream
	Replicas int
	// TTL is how long a member that stops putting its key counts as live.
	// The bucket is created with the first member's TTL. Default
	// DefaultGroupTTL.
	TTL time.Duration
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

// NewGroup binds (creating it if missing) BucketDeciders and returns this
// process's membership, not yet announced (Run announces it). Errors:
// ErrConfig, or the bucket's.
func NewGroup(ctx context.Context, cfg GroupConfig) (*Group, error) {
	if cfg.JS == nil {
		return nil, fmt.Errorf("%w: a group needs JetStream", ErrConfig)
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultGroupTTL
	}
	if cfg.TTL < time.Second {
		return nil, fmt.Errorf("%w: group TTL %s is under a second", ErrConfig, cfg.TTL)
	}
	if cfg.Replicas < 1 {
		cfg.Replicas = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	kv, err := cfg.JS.KeyValue(ctx, BucketDeciders)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = cfg.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: BucketDeciders,
			Description: "live deciders processes, one key each, put every third of the TTL",
			History:     1, TTL: cfg.TTL, LimitMarkerTTL: cfg.TTL, Storage: jetstream.FileStorage, Replicas: cfg.Replicas})
		if errors.Is(err, jetstream.ErrBucketExists) { // another process created it first
			kv, err = cfg.JS.KeyValue(ctx, BucketDeciders)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("deciders: bucket %s: %w", BucketDeciders, err)
	}
	g := &Group{kv: kv, nc: cfg.JS.Conn(), self: nuid.Next(), ttl: cfg.TTL, log: cfg.Logger, mirror: views.NewMirror[member](kv, nil)}
	g.members = []string{g.self}
	g.mirror.OnChange(func(string, member, bool) { g.refresh() })
	return g, nil
}

// OnChange registers fn to be called whenever the live members change.
// Register before Run.
func (g *Group) OnChange(fn func()) {
	g.refreshing.Lock()
	defer g.refreshing.Unlock()
	g.changed = append(g.changed, fn)
}

// RunOwned runs fn while this member owns key, until ctx ends: fn's
// context ends once another member comes to own key (when the live
// members change), and fn runs again when this one owns it again. A lone
// member owns every key. Members see a change a moment apart, so for that
// moment two may both run fn: what fn does must be safe twice (the audit
// writer's compare-and-set is). fn returning before its context ends is
// RunOwned's return.
func (g *Group) RunOwned(ctx context.Context, key string, fn func(context.Context) error) error {
	changed := make(chan struct{}, 1)
	g.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	for {
		for !g.Owns(key) {
			select {
			case <-ctx.Done():
				return nil
			case <-changed:
			}
		}
		fctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- fn(fctx) }()
		for owned := true; owned; {
			select {
			case err := <-done:
				cancel()
				return err
			case <-changed:
				owned = g.Owns(key)
			}
		}
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			return err
		}
	}
}

// Size is the number of live members, this one included.
func (g *Group) Size() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.members)
}

// Owns reports whether this member owns key: the live member whose hash of
// (member, key) is highest.
func (g *Group) Owns(key string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	best, top := "", uint64(0)
	for _, m := range g.members {
		if w := weight(m, key); best == "" || w > top || (w == top && m < best) {
			best, top = m, w
		}
	}
	return best == g.self
}

// weight is FNV-1a of member and key, mixed (splitmix64's finaliser) so
// that keys differing in their last bytes spread evenly over the members.
func weight(m, key string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(m))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(key))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// refresh recomputes the live members from the mirror: every key put
// within three TTLs by the local clock (a purge marker a watcher missed
// while cut off for longer than the markers live must not keep a dead
// member owning keys forever), and self. It tells OnChange's functions
// when they changed.
func (g *Group) refresh() {
	g.refreshing.Lock()
	defer g.refreshing.Unlock()
	live := []string{g.self}
	now := time.Now()
	g.mirror.Each(func(key string, m member) {
		if key != g.self && now.Sub(m.At) < 3*g.ttl {
			live = append(live, key)
		}
	})
	slices.Sort(live)
	g.mu.Lock()
	same := slices.Equal(live, g.members)
	g.members = live
	g.mu.Unlock()
	if !same {
		for _, fn := range g.changed {
			fn()
		}
	}
}

// Run announces this member and keeps it live until ctx ends, then deletes
// its key so that the others take its share at once. It follows the
// members meanwhile (restarting its watcher on every reconnect).
func (g *Group) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watched := make(chan error, 1)
	go func() { watched <- g.mirror.Run(ctx) }()
	status := g.nc.StatusChanged(nats.CONNECTED)
	defer g.nc.RemoveStatusListener(status)
	beat := time.NewTicker(g.ttl / 3)
	defer beat.Stop()
	g.put(ctx)
	for {
		select {
		case <-ctx.Done():
			g.leave()
			return <-watched
		case err := <-watched:
			g.leave()
			return err
		case <-status:
			g.mirror.Restart()
			g.put(ctx)
		case <-beat.C:
			g.put(ctx)
			g.refresh()
		}
	}
}

func (g *Group) put(ctx context.Context) {
	v, _ := json.Marshal(member{At: time.Now()})
	if _, err := g.kv.Put(ctx, g.self, v); err != nil && ctx.Err() == nil {
		g.log.Warn("deciders: group heartbeat failed", "err", err)
	}
}

// leave deletes this member's key, bounded: a gone server lets it age out.
func (g *Group) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = g.kv.Delete(ctx, g.self)
}
