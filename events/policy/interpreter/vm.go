// Package interpreter runs the Lua scripts of Karmada's
// ResourceInterpreterCustomization (reference features §7) on a sandboxed
// Lua 5.1 VM (github.com/yuin/gopher-lua, which Karmada uses): the
// libraries Karmada opens and nothing else, its `kube` helper module, a
// deadline per call and its conversion rules between objects and Lua
// tables. It does no I/O: no file, OS or network access is reachable from
// a script.
//
// policyd runs the replica, component and dependency scripts when it binds
// a template, executord the revision, retention, reflection and health
// scripts when it applies and collects, and readmodel the aggregation
// script for `flotilla get` and `describe`; all of them run the same code.
package interpreter

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Timeout is the deadline of one call: the whole script, then its
// function (reference features §7.5.5).
const Timeout = time.Second

// MemoryLimit is how much the process's heap may grow while one call runs
// before the call is stopped: Karmada sets no limit, and within its
// deadline one script can allocate gigabytes (a string doubled by `..` in
// a loop, a table grown without end). gopher-lua has no allocation hook,
// so the growth of the Go heap is the measure: sampled every
// heapSampleEvery, the call stopped at its next instruction once over. It
// bounds a runaway script to about this much plus its last instruction's
// allocation; other work of the process in the same moment counts too,
// which the margin of a limit far above any real script's needs absorbs.
const MemoryLimit = 512 << 20

// heapSampleEvery is how often a running call's heap growth is sampled.
const heapSampleEvery = 2 * time.Millisecond

// maxStringArg is the longest string a string-library function accepts.
const maxStringArg = 1_000_000

// poolSize bounds the idle states kept for reuse.
const poolSize = 8

// VM runs scripts. States are pooled and reused, as in Karmada, so globals
// a script sets stay visible to the next script run on the same state.
// A VM is safe for concurrent use.
type VM struct {
	pool    chan *lua.LState
	timeout time.Duration
	memory  uint64 // MemoryLimit
}

// New returns a VM with Karmada's one-second deadline per call and
// MemoryLimit.
func New() *VM {
	return &VM{pool: make(chan *lua.LState, poolSize), timeout: Timeout, memory: MemoryLimit}
}

// shared is the VM the package-level operations use.
var shared = New()

// Default returns the process's shared VM.
func Default() *VM { return shared }

// SyntaxError is a script that does not compile: the 1-based line within
// the script (its last line when the error is at its end) and why.
type SyntaxError struct {
	Line    int
	Message string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Message) }

// Compile parses and compiles a script without running it (reference
// features §7.4.3); a failure is a *SyntaxError.
func Compile(script string) error {
	chunk, err := parse.Parse(strings.NewReader(script), "<script>")
	if err == nil {
		_, err = lua.Compile(chunk, "<script>")
	}
	if err == nil {
		return nil
	}
	line, msg := 0, err.Error()
	var perr *parse.Error
	if errors.As(err, &perr) {
		line, msg = perr.Pos.Line, strings.TrimSpace(perr.Message)
		if perr.Token != "" {
			msg += " near '" + perr.Token + "'"
		}
	} else {
		line = lineOf(msg)
	}
	if line <= 0 {
		line = strings.Count(strings.TrimRight(script, "\n"), "\n") + 1
	}
	return &SyntaxError{Line: line, Message: msg}
}

// lineOf reads "line:N" from a gopher-lua message; 0 when there is none.
func lineOf(msg string) int {
	i := strings.Index(msg, "line:")
	if i < 0 {
		return 0
	}
	n := 0
	for _, r := range msg[i+len("line:"):] {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
	}
	return n
}

func (vm *VM) get() *lua.LState {
	select {
	case l := <-vm.pool:
		return l
	default:
		return newState()
	}
}

func (vm *VM) put(l *lua.LState) {
	l.SetTop(0)
	select {
	case vm.pool <- l:
	default:
		l.Close()
	}
}

// call runs script, then calls its global function fn with args, all
// under the deadline, and hands the nret results to read while the state
// is still held.
func (vm *VM) call(script, fn string, nret int, args []any, read func(l *lua.LState, rets []lua.LValue) error) error {
	l := vm.get()
	ctx, cancel := context.WithTimeout(context.Background(), vm.timeout)
	defer cancel()
	over := watchHeap(ctx, cancel, vm.memory)
	l.SetContext(ctx)
	defer func() {
		l.RemoveContext()
		if over.Load() {
			l.Close() // its globals may hold what it allocated
			return
		}
		vm.put(l)
	}()
	scriptError := func(err error) error { return vm.scriptError(ctx, over.Load(), err) }
	if err := l.DoString(script); err != nil {
		return scriptError(err)
	}
	f := l.GetGlobal(fn)
	if f.Type() != lua.LTFunction {
		return fmt.Errorf("not found function %s", fn)
	}
	l.Push(f)
	for _, a := range args {
		v, err := toLua(l, a)
		if err != nil {
			return err
		}
		l.Push(v)
	}
	if err := l.PCall(len(args), nret, nil); err != nil {
		return scriptError(err)
	}
	rets := make([]lua.LValue, nret)
	for i := range rets {
		rets[i] = l.Get(i - nret)
	}
	return read(l, rets)
}

// scriptError words a failed run: the memory limit, the deadline, or the
// script's own error without gopher-lua's stack dump.
func (vm *VM) scriptError(ctx context.Context, overMemory bool, err error) error {
	if overMemory {
		return fmt.Errorf("script exceeded the memory limit (%d MiB allocated in one call)", vm.memory>>20)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("script exceeded the %s deadline", vm.timeout)
	}
	var aerr *lua.ApiError
	if errors.As(err, &aerr) && aerr.Object != nil {
		return errors.New(aerr.Object.String())
	}
	return err
}

// heapObjects is the runtime metric of the Go heap's objects, live and not
// yet swept: what an allocation adds to at once.
const heapObjects = "/memory/classes/heap/objects:bytes"

// watchHeap samples the heap until ctx is done and, once it has grown by
// more than limit since the call began, cancels the call and reports so.
func watchHeap(ctx context.Context, cancel context.CancelFunc, limit uint64) *atomic.Bool {
	var over atomic.Bool
	sample := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(sample)
	start := sample[0].Value.Uint64()
	go func() {
		tick := time.NewTicker(heapSampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if now := sample[0].Value.Uint64(); now > start && now-start > limit {
				over.Store(true)
				cancel()
				return
			}
		}
	}()
	return &over
}

// newState opens exactly the libraries of reference features §7.5: base
// (less the stubs below), table, math, package (preload only), string
// (less gsub, rep and dump, and no argument over 1,000,000 bytes) and os
// with only time and date; io, debug and coroutine are not opened. The
// kube module is preloaded for require("kube").
func newState() *lua.LState {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.MathLibName, lua.OpenMath},
		{lua.StringLibName, lua.OpenString},
		{lua.OsLibName, lua.OpenOs},
	} {
		l.Push(l.NewFunction(lib.open))
		l.Push(lua.LString(lib.name))
		l.Call(1, 0)
	}
	g := l.G.Global
	for _, name := range []string{"load", "loadfile", "loadstring", "dofile", "getfenv", "setfenv",
		"getmetatable", "setmetatable", "rawequal", "rawget", "rawset", "collectgarbage", "module", "newproxy"} {
		g.RawSetString(name, notSupported(l, name))
	}
	pkg := l.GetGlobal(lua.LoadLibName).(*lua.LTable)
	pkg.RawSetString("loadlib", notSupported(l, "loadlib"))
	// Only the preload searcher stays: require finds kube and nothing on disk.
	if loaders, ok := pkg.RawGetString("loaders").(*lua.LTable); ok {
		for i := loaders.Len(); i > 1; i-- {
			loaders.Remove(i)
		}
	}
	pkg.RawSetString("path", lua.LString(""))
	safeString(l)
	os := l.GetGlobal(lua.OsLibName).(*lua.LTable)
	safeOs := l.NewTable()
	safeOs.RawSetString("time", os.RawGetString("time"))
	safeOs.RawSetString("date", os.RawGetString("date"))
	l.SetGlobal(lua.OsLibName, safeOs)
	l.GetField(l.Get(lua.RegistryIndex), "_LOADED").(*lua.LTable).RawSetString(lua.OsLibName, safeOs)
	l.PreloadModule("kube", openKube)
	return l
}

func notSupported(l *lua.LState, name string) *lua.LFunction {
	return l.NewFunction(func(l *lua.LState) int {
		l.RaiseError("%s is not supported", name)
		return 0
	})
}

// safeString removes gsub, rep and dump and makes every other string
// function refuse a string argument over maxStringArg bytes.
func safeString(l *lua.LState) {
	mod := l.GetGlobal(lua.StringLibName).(*lua.LTable)
	for _, name := range []string{"gsub", "rep", "dump"} {
		mod.RawSetString(name, notSupported(l, "string."+name))
	}
	var names []string
	mod.ForEach(func(k, v lua.LValue) {
		if _, ok := v.(*lua.LFunction); ok {
			names = append(names, k.String())
		}
	})
	for _, name := range names {
		if name == "gsub" || name == "rep" || name == "dump" {
			continue
		}
		inner := mod.RawGetString(name).(*lua.LFunction)
		mod.RawSetString(name, l.NewFunction(func(l *lua.LState) int {
			top := l.GetTop()
			for i := 1; i <= top; i++ {
				if s, ok := l.Get(i).(lua.LString); ok && len(s) > maxStringArg {
					l.RaiseError("string.%s: argument %d is longer than %d bytes", name, i, maxStringArg)
				}
			}
			l.Insert(inner, 1)
			l.Call(top, lua.MultRet)
			return l.GetTop()
		}))
	}
}
