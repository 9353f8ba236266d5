package simulate

import (
	"io"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/flotilla-io/flotilla/events"
)

// WriteJSON writes {"results": [...]}: byte for byte what encoding/json's
// Encoder with SetIndent("", "  ") writes for
// struct{ Results []Result `json:"results"` }, but without reflection and
// with the results encoded concurrently (a large simulation's output is
// hundreds of megabytes: every filtered cluster has a diagnosis and every
// placed one a manifest).
func WriteJSON(w io.Writer, results []Result) error {
	if len(results) == 0 {
		_, err := io.WriteString(w, "{\n  \"results\": []\n}\n")
		return err
	}
	if _, err := io.WriteString(w, "{\n  \"results\": [\n    "); err != nil {
		return err
	}
	// Batches of results are encoded concurrently, each while the one
	// before is written.
	const batch = 256
	workers := runtime.GOMAXPROCS(0)
	type batchBufs struct {
		bufs [][]byte
		errs []error
	}
	var sets [2]batchBufs
	for i := range sets {
		sets[i] = batchBufs{make([][]byte, min(batch, len(results))), make([]error, min(batch, len(results)))}
	}
	encs := make([]encoder, workers) // one per worker, reused: its key scratch
	encode := func(set *batchBufs, start, end int) *sync.WaitGroup {
		var wg sync.WaitGroup
		var next atomic.Int64
		next.Store(int64(start))
		for wi := range min(workers, end-start) {
			wg.Go(func() {
				e := &encs[wi]
				for {
					i := int(next.Add(1) - 1)
					if i >= end {
						return
					}
					e.buf = set.bufs[i-start][:0]
					set.errs[i-start] = e.result(&results[i], 2)
					set.bufs[i-start] = e.buf
				}
			})
		}
		return &wg
	}
	pending := encode(&sets[0], 0, min(batch, len(results)))
	defer func() {
		if pending != nil {
			pending.Wait() // an error left a batch being encoded
		}
	}()
	for start, n := 0, 0; start < len(results); start, n = start+batch, n+1 {
		end := min(start+batch, len(results))
		pending.Wait()
		pending = nil
		if end < len(results) {
			pending = encode(&sets[(n+1)%2], end, min(end+batch, len(results)))
		}
		set := &sets[n%2]
		for i := start; i < end; i++ {
			if err := set.errs[i-start]; err != nil {
				return err
			}
			if i > 0 {
				if _, err := io.WriteString(w, ",\n    "); err != nil {
					return err
				}
			}
			if _, err := w.Write(set.bufs[i-start]); err != nil {
				return err
			}
		}
	}
	_, err := io.WriteString(w, "\n  ]\n}\n")
	return err
}

// encoder appends indented JSON to buf. depth is the indentation level of
// the line the value starts on.
type encoder struct {
	buf  []byte
	keys []string // a stack of sorted map keys, one frame per open map
	// shared: the encoding of the manifest subtrees (maps) encoded so far
	// for the current result, by map and depth: the manifests of one
	// template share most of their maps (see renderAll), and each is
	// encoded once. Reset per result.
	shared map[sharedKey][2]int // -> e.buf[from:to]
	// slices: the diagnosis slices encoded so far in the current map.
	slices []sliceSeen
	// maps: the last diagnosis maps encoded (by any result of this
	// encoder) and their encodings. Results of the same policy mostly
	// share one diagnosis map (core.Result.Diagnosis may be shared).
	maps [4]encodedMap
	next int // in maps, the next to replace
}

type encodedMap struct {
	m     unsafe.Pointer
	depth int
	order unsafe.Pointer // the key order used (clusterNames)
	enc   []byte
}

type sharedKey struct {
	m     unsafe.Pointer
	depth int
}

type sliceSeen struct {
	first *string
	n     int
	at    [2]int
}

// newlines is a line break followed by enough indentation for any depth
// a manifest reaches; deeper levels are written a step at a time.
var newlines = "\n" + strings.Repeat(" ", 128)

func (e *encoder) newline(depth int) {
	if n := 1 + 2*depth; n <= len(newlines) {
		e.buf = append(e.buf, newlines[:n]...)
		return
	}
	e.buf = append(e.buf, newlines...)
	for range depth - (len(newlines)-1)/2 {
		e.buf = append(e.buf, ' ', ' ')
	}
}

// pushKeys pushes m's keys, sorted, on the key stack and returns their
// frame; popKeys(lo) drops it. Frames of nested maps go above it.
func pushKeys[V any](e *encoder, m map[string]V) (lo, hi int) {
	lo = len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	hi = len(e.keys)
	slices.Sort(e.keys[lo:hi])
	return lo, hi
}

func (e *encoder) popKeys(lo int) { e.keys = e.keys[:lo] }

// field starts the i-th member of an object at depth.
func (e *encoder) field(i, depth int, key string) {
	if i > 0 {
		e.buf = append(e.buf, ',')
	}
	e.newline(depth + 1)
	e.buf = appendString(e.buf, key)
	e.buf = append(e.buf, ':', ' ')
}

// end closes an object ('}') or array (']') of n members opened at depth:
// right after the opening bracket when empty, else on a line of its own.
func (e *encoder) end(n, depth int, bracket byte) {
	if n > 0 {
		e.newline(depth)
	}
	e.buf = append(e.buf, bracket)
}

func (e *encoder) result(r *Result, d int) error {
	e.buf = append(e.buf, '{')
	e.field(0, d, "resource")
	e.buf = append(e.buf, '{')
	for i, kv := range [][2]string{{"apiVersion", r.Resource.APIVersion}, {"kind", r.Resource.Kind}, {"namespace", r.Resource.Namespace}, {"name", r.Resource.Name}} {
		e.field(i, d+1, kv[0])
		e.buf = appendString(e.buf, kv[1])
	}
	e.end(4, d+1, '}')
	e.field(1, d, "policy")
	if p := r.Policy; p == nil {
		e.buf = append(e.buf, "null"...)
	} else {
		e.buf = append(e.buf, '{')
		for i, kv := range [][2]string{{"kind", p.Kind}, {"namespace", p.Namespace}, {"name", p.Name}} {
			e.field(i, d+1, kv[0])
			e.buf = appendString(e.buf, kv[1])
		}
		e.end(3, d+1, '}')
	}
	e.field(2, d, "scheduled")
	e.buf = strconv.AppendBool(e.buf, r.Scheduled)
	e.field(3, d, "clusters")
	if r.Clusters == nil {
		e.buf = append(e.buf, "null"...)
	} else {
		e.buf = append(e.buf, '[')
		for i, c := range r.Clusters {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.newline(d + 2)
			e.buf = append(e.buf, '{')
			e.field(0, d+2, "name")
			e.buf = appendString(e.buf, c.Name)
			e.field(1, d+2, "replicas")
			e.buf = strconv.AppendInt(e.buf, int64(c.Replicas), 10)
			n := 2
			if len(c.Components) > 0 {
				// Omitted when empty, as encoding/json's omitempty does.
				e.field(2, d+2, "components")
				e.buf = append(e.buf, '[')
				for j, comp := range c.Components {
					if j > 0 {
						e.buf = append(e.buf, ',')
					}
					e.newline(d + 4)
					e.buf = append(e.buf, '{')
					e.field(0, d+4, "name")
					e.buf = appendString(e.buf, comp.Name)
					e.field(1, d+4, "replicas")
					e.buf = strconv.AppendInt(e.buf, int64(comp.Replicas), 10)
					e.end(2, d+4, '}')
				}
				e.end(len(c.Components), d+3, ']')
				n = 3
			}
			e.end(n, d+2, '}')
		}
		e.end(len(r.Clusters), d+1, ']')
	}
	e.field(4, d, "feasible")
	e.strings(r.Feasible, d+1)
	e.field(5, d, "diagnosis")
	e.diagnosis(r.Diagnosis, d+1, r.clusterNames)
	e.field(6, d, "error")
	e.buf = appendString(e.buf, r.Error)
	e.field(7, d, "manifests")
	if r.Manifests == nil {
		e.buf = append(e.buf, "null"...)
	} else {
		clear(e.shared)
		e.buf = append(e.buf, '{')
		start, i := len(e.buf), 0
		if names, ok := targetNames(r.Clusters); ok {
			for _, k := range names {
				m, ok := r.Manifests[k]
				if !ok {
					continue
				}
				e.field(i, d+1, k)
				if err := e.manifest(m, d+2); err != nil {
					return err
				}
				i++
			}
		}
		if i != len(r.Manifests) {
			// Manifests for other clusters than the placement's: in key
			// order, forgetting what was encoded into the dropped bytes.
			e.buf, i = e.buf[:start], 0
			clear(e.shared)
			lo, hi := pushKeys(e, r.Manifests)
			for i := lo; i < hi; i++ {
				k := e.keys[i]
				e.field(i-lo, d+1, k)
				if err := e.manifest(r.Manifests[k], d+2); err != nil {
					return err
				}
			}
			e.popKeys(lo)
		}
		e.end(len(r.Manifests), d+1, '}')
	}
	e.field(8, d, "overrides")
	names, _ := targetNames(r.Clusters)
	e.stringsMap(r.Overrides, d+1, names)
	n := 9
	if len(r.RenderErrors) > 0 {
		e.field(9, d, "renderErrors")
		e.buf = append(e.buf, '{')
		for i, k := range slices.Sorted(maps.Keys(r.RenderErrors)) {
			e.field(i, d+1, k)
			e.buf = appendString(e.buf, r.RenderErrors[k])
		}
		e.end(len(r.RenderErrors), d+1, '}')
		n++
	}
	e.end(n, d, '}')
	return nil
}

func (e *encoder) strings(ss []string, d int) {
	if ss == nil {
		e.buf = append(e.buf, "null"...)
		return
	}
	e.buf = append(e.buf, '[')
	for i, s := range ss {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.newline(d + 1)
		e.buf = appendString(e.buf, s)
	}
	e.end(len(ss), d, ']')
}

// stringsMap encodes a map of string lists. The scheduler's diagnosis
// shares one reasons slice between the clusters filtered for the same
// reasons, so each distinct slice is encoded once. order, when not nil,
// holds the keys in sorted order, and maybe others: when every key of m
// is in it, the keys are taken in that order instead of being sorted.
func (e *encoder) stringsMap(m map[string][]string, d int, order []string) {
	if m == nil {
		e.buf = append(e.buf, "null"...)
		return
	}
	e.slices = e.slices[:0]
	e.buf = append(e.buf, '{')
	start, i := len(e.buf), 0
	for _, k := range order {
		if ss, ok := m[k]; ok {
			e.field(i, d, k)
			e.stringsOnce(ss, d)
			i++
		}
	}
	if i != len(m) {
		e.buf, e.slices = e.buf[:start], e.slices[:0]
		lo, hi := pushKeys(e, m)
		for i := lo; i < hi; i++ {
			k := e.keys[i]
			e.field(i-lo, d, k)
			e.stringsOnce(m[k], d)
		}
		e.popKeys(lo)
	}
	e.end(len(m), d, '}')
}

// diagnosis is stringsMap, copying the encoding of a map encoded before
// (the very map, at the same depth, with the same key order).
func (e *encoder) diagnosis(m map[string][]string, d int, order []string) {
	if m == nil {
		e.stringsMap(m, d, order)
		return
	}
	p := reflect.ValueOf(m).UnsafePointer()
	o := unsafe.Pointer(unsafe.SliceData(order))
	for i := range e.maps {
		if c := &e.maps[i]; c.m == p && c.depth == d && c.order == o {
			e.buf = append(e.buf, c.enc...)
			return
		}
	}
	start := len(e.buf)
	e.stringsMap(m, d, order)
	c := &e.maps[e.next]
	e.next = (e.next + 1) % len(e.maps)
	c.m, c.depth, c.order = p, d, o
	c.enc = append(c.enc[:0], e.buf[start:]...)
}

// stringsOnce encodes ss, or copies its encoding when the same slice was
// encoded before in the current map.
func (e *encoder) stringsOnce(ss []string, d int) {
	if len(ss) == 0 {
		e.strings(ss, d+1)
		return
	}
	first := &ss[0]
	for _, s := range e.slices {
		if s.first == first && s.n == len(ss) {
			e.buf = append(e.buf, e.buf[s.at[0]:s.at[1]]...)
			return
		}
	}
	start := len(e.buf)
	e.strings(ss, d+1)
	if len(e.slices) < 16 {
		e.slices = append(e.slices, sliceSeen{first, len(ss), [2]int{start, len(e.buf)}})
	}
}

// targetNames returns the names of the placement when they are strictly
// increasing (the order of the manifests and overrides maps' keys).
func targetNames(ts []events.TargetCluster) ([]string, bool) {
	var stack [16]string
	names := stack[:0]
	for i, t := range ts {
		if i > 0 && t.Name <= ts[i-1].Name {
			return nil, false
		}
		names = append(names, t.Name)
	}
	return names, true
}
