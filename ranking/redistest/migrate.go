package redistest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// migrateTimeoutMS bounds one MIGRATE command on the source node; the keys of
// a test are small, so a slow MIGRATE means something is wrong.
const migrateTimeoutMS = 10000

// finishRounds bounds how often Finish drains the source again when keys
// appear there between its last drain and the slot's reassignment.
const finishRounds = 20

// KeySlot returns the cluster hash slot of key: CRC16 (XMODEM) of the key, or
// of its hash tag (the text between the first "{" and the next "}" when that
// is not empty), modulo 16384.
func KeySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// NodeIDs returns the cluster node id of every master, in the order of Addrs.
func (c *Cluster) NodeIDs(ctx context.Context) ([]string, error) {
	ids := make([]string, len(c.Addrs))
	for i, addr := range c.Addrs {
		cl := redis.NewClient(probeOptions(addr))
		id, err := cl.Do(ctx, "CLUSTER", "MYID").Text()
		cl.Close()
		if err != nil {
			return nil, fmt.Errorf("redistest: %s: CLUSTER MYID: %w", addr, err)
		}
		ids[i] = id
	}
	return ids, nil
}

// SlotOwner returns the index in Addrs of the master that serves slot, as the
// first master sees it.
func (c *Cluster) SlotOwner(ctx context.Context, slot int) (int, error) {
	cl := redis.NewClient(probeOptions(c.Addrs[0]))
	defer cl.Close()
	slots, err := cl.ClusterSlots(ctx).Result()
	if err != nil {
		return 0, fmt.Errorf("redistest: %s: CLUSTER SLOTS: %w", c.Addrs[0], err)
	}
	for _, s := range slots {
		if slot >= s.Start && slot <= s.End && len(s.Nodes) > 0 {
			if i := slices.Index(c.Addrs, s.Nodes[0].Addr); i >= 0 {
				return i, nil
			}
			return 0, fmt.Errorf("redistest: slot %d is served by %s, not a master of this cluster", slot, s.Nodes[0].Addr)
		}
	}
	return 0, fmt.Errorf("redistest: slot %d is not assigned", slot)
}

// SlotMove is one hash slot on its way from one master of a Cluster to
// another, moved in steps as redis-cli --cluster reshard does, so that a test
// can send traffic in every intermediate state:
//
//  1. BeginMove: CLUSTER SETSLOT slot IMPORTING on the target, then
//     MIGRATING on the source (in this order, so that a client the source
//     sends on with ASK finds the target ready);
//  2. MoveKeys / MoveBatch: MIGRATE host port "" 0 timeout KEYS ... from the
//     source; a key the source no longer has is answered ASK, so clients
//     find moved keys on the target and the rest on the source;
//  3. Finish: moves what is left, then CLUSTER SETSLOT slot NODE target on
//     the target (which bumps its config epoch so the change wins), the
//     source (refused while it still holds keys of the slot) and every other
//     master, and waits until all masters agree on the slot map.
type SlotMove struct {
	// Slot is the hash slot being moved.
	Slot int
	// From and To index Cluster.Addrs: the source and the target master.
	From, To int
	// Replace lets a key that already exists on the target be overwritten
	// with the source's copy (MIGRATE REPLACE) instead of failing the move.
	// Either way the key is listed in Conflicts: on a healthy cluster no key
	// of a migrating slot can be written on the target before it moves.
	Replace bool

	c            *Cluster
	fromID, toID string
	src          *redis.Client
	moved        int
	conflicts    []string
	finished     bool
}

// BeginMove opens slot for migration from the master that serves it to the
// master Addrs[to]. Close the move (or Finish it) when done.
func (c *Cluster) BeginMove(ctx context.Context, slot, to int) (*SlotMove, error) {
	if slot < 0 || slot >= 16384 {
		return nil, fmt.Errorf("redistest: slot %d out of range 0..16383", slot)
	}
	if to < 0 || to >= len(c.Addrs) {
		return nil, fmt.Errorf("redistest: no master %d (the cluster has %d)", to, len(c.Addrs))
	}
	from, err := c.SlotOwner(ctx, slot)
	if err != nil {
		return nil, err
	}
	if from == to {
		return nil, fmt.Errorf("redistest: slot %d is already served by %s", slot, c.Addrs[to])
	}
	ids, err := c.NodeIDs(ctx)
	if err != nil {
		return nil, err
	}
	m := &SlotMove{Slot: slot, From: from, To: to, c: c, fromID: ids[from], toID: ids[to]}
	if err := c.setSlot(ctx, to, slot, "IMPORTING", m.fromID); err != nil {
		return nil, err
	}
	if err := c.setSlot(ctx, from, slot, "MIGRATING", m.toID); err != nil {
		return nil, errors.Join(err, c.setSlot(ctx, to, slot, "STABLE"))
	}
	m.src = redis.NewClient(probeOptions(c.Addrs[from]))
	return m, nil
}

func (c *Cluster) setSlot(ctx context.Context, node, slot int, args ...string) error {
	cl := redis.NewClient(probeOptions(c.Addrs[node]))
	defer cl.Close()
	cmd := []any{"CLUSTER", "SETSLOT", slot}
	for _, a := range args {
		cmd = append(cmd, a)
	}
	if err := cl.Do(ctx, cmd...).Err(); err != nil {
		return fmt.Errorf("redistest: %s: CLUSTER SETSLOT %d %s: %w", c.Addrs[node], slot, strings.Join(args, " "), err)
	}
	return nil
}

// Pending lists up to n keys of the slot that are still on the source.
func (m *SlotMove) Pending(ctx context.Context, n int) ([]string, error) {
	keys, err := m.src.ClusterGetKeysInSlot(ctx, m.Slot, n).Result()
	if err != nil {
		return nil, fmt.Errorf("redistest: %s: CLUSTER GETKEYSINSLOT %d: %w", m.c.Addrs[m.From], m.Slot, err)
	}
	return keys, nil
}

// MoveKeys migrates keys from the source to the target in one MIGRATE. A key
// the source does not hold is skipped. A key the target already holds is a
// conflict (see Replace).
func (m *SlotMove) MoveKeys(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	err := m.migrate(ctx, false, keys)
	if err == nil {
		m.moved += len(keys)
		return nil
	}
	if !strings.Contains(err.Error(), "BUSYKEY") {
		return err
	}
	// MIGRATE deletes from the source only the keys the target accepted;
	// go key by key through the rest to learn which ones clash.
	for _, k := range keys {
		err := m.migrate(ctx, false, []string{k})
		if err != nil && strings.Contains(err.Error(), "BUSYKEY") {
			if !slices.Contains(m.conflicts, k) {
				m.conflicts = append(m.conflicts, k)
			}
			if !m.Replace {
				return fmt.Errorf("redistest: key %q of slot %d exists on both %s and %s: %w", k, m.Slot, m.c.Addrs[m.From], m.c.Addrs[m.To], err)
			}
			err = m.migrate(ctx, true, []string{k})
		}
		if err != nil {
			return err
		}
	}
	m.moved += len(keys)
	return nil
}

// migrate runs MIGRATE on the source; "NOKEY" (nothing to move) is no error.
func (m *SlotMove) migrate(ctx context.Context, replace bool, keys []string) error {
	host, port, _ := strings.Cut(m.c.Addrs[m.To], ":")
	args := []any{"MIGRATE", host, port, "", 0, migrateTimeoutMS}
	if replace {
		args = append(args, "REPLACE")
	}
	args = append(args, "KEYS")
	for _, k := range keys {
		args = append(args, k)
	}
	res, err := m.src.Do(ctx, args...).Result()
	if err != nil {
		return fmt.Errorf("redistest: %s: MIGRATE %d keys to %s: %w", m.c.Addrs[m.From], len(keys), m.c.Addrs[m.To], err)
	}
	if s, _ := res.(string); s != "OK" && s != "NOKEY" {
		return fmt.Errorf("redistest: %s: MIGRATE answered %v", m.c.Addrs[m.From], res)
	}
	return nil
}

// MoveBatch migrates up to n keys still on the source and returns how many it
// moved: 0 when the source holds none.
func (m *SlotMove) MoveBatch(ctx context.Context, n int) (int, error) {
	keys, err := m.Pending(ctx, n)
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	return len(keys), m.MoveKeys(ctx, keys...)
}

// Finish moves every key left on the source, assigns the slot to the target
// on every master, waits until all masters agree on the slot map, and closes
// the move.
func (m *SlotMove) Finish(ctx context.Context) error {
	if m.finished {
		return errors.New("redistest: slot move already finished")
	}
	for round := 0; ; round++ {
		for {
			n, err := m.MoveBatch(ctx, 100)
			if err != nil {
				return err
			}
			if n == 0 {
				break
			}
		}
		// The target first: it then owns the slot and its new epoch wins.
		if err := m.c.setSlot(ctx, m.To, m.Slot, "NODE", m.toID); err != nil {
			return err
		}
		// The source refuses while it still holds keys of the slot (one
		// written there after the drain): drain again.
		err := m.c.setSlot(ctx, m.From, m.Slot, "NODE", m.toID)
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "still hold keys") || round >= finishRounds {
			return err
		}
	}
	for i := range m.c.Addrs {
		if i == m.From || i == m.To {
			continue
		}
		if err := m.c.setSlot(ctx, i, m.Slot, "NODE", m.toID); err != nil {
			return err
		}
	}
	m.finished = true
	m.src.Close()
	wctx, cancel := context.WithTimeout(ctx, clusterReadyTimeout)
	defer cancel()
	return m.c.waitConsistent(wctx)
}

// Moved returns how many keys MoveKeys was given to move so far (keys the
// source no longer held included).
func (m *SlotMove) Moved() int { return m.moved }

// Conflicts lists the keys that existed on the target when they were moved.
func (m *SlotMove) Conflicts() []string { return slices.Clone(m.conflicts) }

// Close releases the move's connection; an unfinished slot stays in its
// half-moved state (the cluster is for tests: close it next).
func (m *SlotMove) Close() {
	if !m.finished {
		m.finished = true
		m.src.Close()
	}
}

// MoveOptions tune Cluster.MoveSlot.
type MoveOptions struct {
	// Batch is the number of keys per MIGRATE; 10 when 0.
	Batch int
	// Between, when set, runs after every batch with the number of keys moved
	// so far; tests use it to let traffic hit the half-moved slot. An error
	// stops the move (the slot stays half-moved).
	Between func(ctx context.Context, moved int) error
	// Replace as in SlotMove.
	Replace bool
}

// MoveSlot moves slot to master Addrs[to] in batches, as redis-cli --cluster
// reshard does, and returns the finished move (for Moved and Conflicts).
func (c *Cluster) MoveSlot(ctx context.Context, slot, to int, opts MoveOptions) (*SlotMove, error) {
	m, err := c.BeginMove(ctx, slot, to)
	if err != nil {
		return nil, err
	}
	m.Replace = opts.Replace
	batch := opts.Batch
	if batch <= 0 {
		batch = 10
	}
	for {
		n, err := m.MoveBatch(ctx, batch)
		if err != nil {
			m.Close()
			return m, err
		}
		if n == 0 {
			break
		}
		if opts.Between != nil {
			if err := opts.Between(ctx, m.moved); err != nil {
				m.Close()
				return m, err
			}
		}
	}
	return m, m.Finish(ctx)
}

// String describes the move for logs.
func (m *SlotMove) String() string {
	return "slot " + strconv.Itoa(m.Slot) + " from " + m.c.Addrs[m.From] + " to " + m.c.Addrs[m.To]
}
