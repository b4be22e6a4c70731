// ahp-go-adapter serves the reducers of the upstream Go client
// (microsoft/agent-host-protocol, clients/go, package ahp) to ahp-fuzz over
// the adapter protocol (docs/adapters.md), in both the simple and the fast form.
//
// Every state goes through the client's own types: a request's state is
// decoded into the typed state struct (ahptypes.ChatState, …), the action
// with ahptypes.StateAction's own decoder, the reducer (ahp.ApplyActionTo…)
// mutates the typed state in place, and the state is written back with
// encoding/json and the types' MarshalJSON. What the harness sees is
// therefore what the typed client holds, including whatever its types drop
// or change.
//
// Build with bench/wild/build-go-adapter.sh CHECKOUT. Protocol on stdout only,
// diagnostics on stderr. Flags: -forms simple,fast (what to announce).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	"github.com/microsoft/agent-host-protocol/clients/go/ahp"
	"github.com/microsoft/agent-host-protocol/clients/go/ahptypes"
)

const adapterName = "upstream Go client (clients/go ahp package)"

// clientVersion is the client module's release (clients/go/VERSION), set by
// the build script with -ldflags -X.
var clientVersion = "unknown"

// flushEvery bounds how many replies are buffered before a write when the
// harness pipelines requests.
const flushEvery = 64

// ─── kinds ──────────────────────────────────────────────────────────────

// kindOps is one state kind: how the typed client decodes its state and
// which reducer applies an action to it.
type kindOps struct {
	goType string
	decode func([]byte) (any, error)
	apply  func(any, ahptypes.StateAction) ahp.ReduceOutcome
}

func kindOf[T any](goType string, reducer func(*T, ahptypes.StateAction) ahp.ReduceOutcome) kindOps {
	return kindOps{
		goType: goType,
		decode: func(b []byte) (any, error) {
			s := new(T)
			if err := json.Unmarshal(b, s); err != nil {
				return nil, err
			}
			return s, nil
		},
		apply: func(s any, a ahptypes.StateAction) ahp.ReduceOutcome { return reducer(s.(*T), a) },
	}
}

var kindOrder = []string{"root", "session", "chat", "terminal", "changeset", "annotations", "resourceWatch"}

var kinds = map[string]kindOps{
	"root":          kindOf("ahptypes.RootState", ahp.ApplyActionToRoot),
	"session":       kindOf("ahptypes.SessionState", ahp.ApplyActionToSession),
	"chat":          kindOf("ahptypes.ChatState", ahp.ApplyActionToChat),
	"terminal":      kindOf("ahptypes.TerminalState", ahp.ApplyActionToTerminal),
	"changeset":     kindOf("ahptypes.ChangesetState", ahp.ApplyActionToChangeset),
	"annotations":   kindOf("ahptypes.AnnotationsState", ahp.ApplyActionToAnnotations),
	"resourceWatch": kindOf("ahptypes.ResourceWatchState", ahp.ApplyActionToResourceWatch),
}

// roundTripTypes are the wire types a roundTrip request may name: the ones
// the upstream round-trip corpus uses plus every channel state.
var roundTripTypes = map[string]func() any{
	"ActionEnvelope":           func() any { return new(ahptypes.ActionEnvelope) },
	"StateAction":              func() any { return new(ahptypes.StateAction) },
	"Customization":            func() any { return new(ahptypes.Customization) },
	"SessionStatus":            func() any { return new(ahptypes.SessionStatus) },
	"StringOrMarkdown":         func() any { return new(ahptypes.StringOrMarkdown) },
	"JsonRpcMessage":           func() any { return new(ahptypes.JsonRpcMessage) },
	"ChangesetOperationTarget": func() any { return new(ahptypes.ChangesetOperationTarget) },
	"ChatInputQuestion":        func() any { return new(ahptypes.ChatInputQuestion) },
	"SessionSummary":           func() any { return new(ahptypes.SessionSummary) },
	"SessionAddedParams":       func() any { return new(ahptypes.SessionAddedParams) },
	"PartialSessionSummary":    func() any { return new(ahptypes.PartialSessionSummary) },
	"Implementation":           func() any { return new(ahptypes.Implementation) },
	"InitializeResult":         func() any { return new(ahptypes.InitializeResult) },
	"ChatSource":               func() any { return new(ahptypes.ChatSource) },
	"RootState":                func() any { return new(ahptypes.RootState) },
	"SessionState":             func() any { return new(ahptypes.SessionState) },
	"ChatState":                func() any { return new(ahptypes.ChatState) },
	"TerminalState":            func() any { return new(ahptypes.TerminalState) },
	"ChangesetState":           func() any { return new(ahptypes.ChangesetState) },
	"AnnotationsState":         func() any { return new(ahptypes.AnnotationsState) },
	"ResourceWatchState":       func() any { return new(ahptypes.ResourceWatchState) },
}

// ─── errors ─────────────────────────────────────────────────────────────

// replyErr is an error answered to the harness as {"id", "error": {...}}.
type replyErr struct {
	Message string `json:"message"`
	Type    string `json:"type,omitempty"`
	Code    string `json:"code,omitempty"`
	Stack   string `json:"stack,omitempty"`
}

func (e *replyErr) Error() string { return e.Message }

func badRequest(format string, args ...any) *replyErr {
	return &replyErr{Message: fmt.Sprintf(format, args...), Type: "BadRequest", Code: "badRequest"}
}

// clientErr wraps an error the client's own code returned (a decoder or
// encoder refusing a value): an answer of the implementation, not of the adapter.
func clientErr(typ, what string, err error) *replyErr {
	return &replyErr{Message: what + ": " + err.Error(), Type: typ, Code: "reducerError"}
}

func panicErr(where string, p any) *replyErr {
	return &replyErr{
		Message: fmt.Sprintf("panic in %s: %v", where, p),
		Type:    "panic",
		Code:    "reducerError",
		Stack:   string(debug.Stack()),
	}
}

// ─── requests ───────────────────────────────────────────────────────────

type request struct {
	ID           json.RawMessage `json:"id"`
	Op           json.RawMessage `json:"op"`
	Kind         json.RawMessage `json:"kind"`
	Handle       json.RawMessage `json:"handle"`
	State        json.RawMessage `json:"state"`
	Action       json.RawMessage `json:"action"`
	Now          json.RawMessage `json:"now"`
	ObserveClock json.RawMessage `json:"observeClock"`
	Type         json.RawMessage `json:"type"`
	Wire         json.RawMessage `json:"wire"`
}

func present(raw json.RawMessage) bool { return len(raw) > 0 }

func stringField(name string, raw json.RawMessage) (string, *replyErr) {
	var s string
	if !present(raw) || json.Unmarshal(raw, &s) != nil {
		return "", badRequest("%s must be a string", name)
	}
	return s, nil
}

func (r *request) now() (int64, *replyErr) {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(r.Now)), 10, 64)
	if err != nil {
		return 0, badRequest("now must be an integer (milliseconds since the epoch), got %s", orAbsent(r.Now))
	}
	return n, nil
}

func (r *request) kind() (kindOps, *replyErr) {
	name, e := stringField("kind", r.Kind)
	if e != nil {
		return kindOps{}, e
	}
	ops, ok := kinds[name]
	if !ok {
		return kindOps{}, &replyErr{
			Message: fmt.Sprintf("the Go client has no reducer for kind %q (it has %s)", name, strings.Join(kindOrder, ", ")),
			Type:    "UnknownKind", Code: "unknownKind",
		}
	}
	return ops, nil
}

func (r *request) handleKey() (string, *replyErr) {
	if !present(r.Handle) {
		return "", badRequest("request has no handle")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, r.Handle) != nil {
		return "", badRequest("handle is not JSON")
	}
	return buf.String(), nil
}

func orAbsent(raw json.RawMessage) string {
	if !present(raw) {
		return "(absent)"
	}
	if len(raw) > 80 {
		return string(raw[:80]) + "…"
	}
	return string(raw)
}

// ─── the client's code, guarded ─────────────────────────────────────────

func decodeState(ops kindOps, raw json.RawMessage) (st any, e *replyErr) {
	if !present(raw) {
		return nil, badRequest("request has no state")
	}
	defer func() {
		if p := recover(); p != nil {
			st, e = nil, panicErr("decoding the state as "+ops.goType, p)
		}
	}()
	st, err := ops.decode(raw)
	if err != nil {
		return nil, clientErr("DecodeError", "decoding the state as "+ops.goType, err)
	}
	return st, nil
}

// decodeAction decodes with ahptypes.StateAction's own UnmarshalJSON. It maps
// a type it does not know to *ahptypes.StateActionUnknown (the reducers treat
// that as a no-op) and errors on what it cannot read at all.
func decodeAction(raw json.RawMessage) (a ahptypes.StateAction, e *replyErr) {
	if !present(raw) {
		return a, badRequest("request has no action")
	}
	defer func() {
		if p := recover(); p != nil {
			e = panicErr("decoding the action as ahptypes.StateAction", p)
		}
	}()
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, clientErr("DecodeError", "decoding the action as ahptypes.StateAction", err)
	}
	return a, nil
}

type clock struct {
	now   int64
	reads int
}

// read is installed as the reducers' now provider: the only clock they read.
func (c *clock) read() int64 {
	c.reads++
	return c.now
}

func applyAction(ops kindOps, st any, a ahptypes.StateAction, c *clock) (outcome ahp.ReduceOutcome, e *replyErr) {
	defer func() {
		if p := recover(); p != nil {
			e = panicErr(fmt.Sprintf("the reducer for %s (action %T)", ops.goType, a.Value), p)
		}
	}()
	ahp.SetNowProvider(c.read)
	return ops.apply(st, a), nil
}

func encode(what string, v any) (out []byte, e *replyErr) {
	defer func() {
		if p := recover(); p != nil {
			out, e = nil, panicErr("encoding "+what, p)
		}
	}()
	out, err := json.Marshal(v)
	if err != nil {
		return nil, clientErr("EncodeError", "encoding "+what, err)
	}
	return out, nil
}

// ─── the server ─────────────────────────────────────────────────────────

// handle is one fast-form state: the typed state the client holds, its last
// encoding (what the harness's mirror holds), and that encoding decoded as
// plain JSON, to diff against.
type handle struct {
	ops    kindOps
	typed  any
	last   []byte
	mirror any
	broken *replyErr // set when the typed state could not be rebuilt after a failure
}

type server struct {
	forms   map[string]bool
	handles map[string]*handle
}

// reply is the body of a successful reply: "state" (raw JSON), "changes"
// (raw JSON), "wire" (a string) and "clockReads", each optional.
type reply struct {
	state      []byte
	changes    []byte
	wire       *string
	clockReads *int
}

func (s *server) handleLine(line []byte) []byte {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return errorLine(nil, badRequest("request is not a JSON object: %v", err))
	}
	body, e := s.dispatch(&req)
	if e != nil {
		return errorLine(req.ID, e)
	}
	return replyLine(req.ID, body)
}

func (s *server) dispatch(req *request) (body reply, e *replyErr) {
	defer func() { // nothing in one request may end the process
		if p := recover(); p != nil {
			e = panicErr("the adapter", p)
		}
	}()
	op := "reduce"
	if present(req.Op) {
		if op, e = stringField("op", req.Op); e != nil {
			return body, e
		}
	}
	needForm := func(form string) *replyErr {
		if !s.forms[form] {
			return &replyErr{Message: fmt.Sprintf("op %q belongs to the %s form, which this adapter was started without", op, form), Type: "UnsupportedOp", Code: "unsupportedOp"}
		}
		return nil
	}
	switch op {
	case "reduce":
		if e = needForm("simple"); e == nil {
			body, e = s.reduce(req)
		}
	case "load", "step", "read", "drop":
		if e = needForm("fast"); e == nil {
			body, e = s.fast(op, req)
		}
	case "roundTrip":
		body, e = s.roundTrip(req)
	default:
		e = &replyErr{Message: fmt.Sprintf("unknown op %q", op), Type: "UnsupportedOp", Code: "unsupportedOp"}
	}
	return body, e
}

func (s *server) reduce(req *request) (reply, *replyErr) {
	ops, e := req.kind()
	if e != nil {
		return reply{}, e
	}
	now, e := req.now()
	if e != nil {
		return reply{}, e
	}
	st, e := decodeState(ops, req.State)
	if e != nil {
		return reply{}, e
	}
	a, e := decodeAction(req.Action)
	if e != nil {
		return reply{}, e
	}
	c := &clock{now: now}
	if _, e = applyAction(ops, st, a, c); e != nil {
		return reply{}, e
	}
	out, e := encode(ops.goType, st)
	if e != nil {
		return reply{}, e
	}
	body := reply{state: out}
	if string(bytes.TrimSpace(req.ObserveClock)) == "true" {
		body.clockReads = &c.reads
	}
	return body, nil
}

func (s *server) fast(op string, req *request) (reply, *replyErr) {
	key, e := req.handleKey()
	if e != nil {
		return reply{}, e
	}
	switch op {
	case "drop":
		delete(s.handles, key)
		return reply{}, nil
	case "load":
		ops, e := req.kind()
		if e != nil {
			return reply{}, e
		}
		delete(s.handles, key)
		st, e := decodeState(ops, req.State)
		if e != nil {
			// Later steps on this handle answer the same error.
			s.handles[key] = &handle{ops: ops, broken: &replyErr{
				Message: "the state loaded under this handle did not decode: " + e.Message, Type: e.Type, Code: e.Code,
			}}
			return reply{}, e
		}
		mirror, err := plainJSON(req.State)
		if err != nil {
			return reply{}, badRequest("state is not JSON: %v", err)
		}
		s.handles[key] = &handle{ops: ops, typed: st, last: req.State, mirror: mirror}
		return reply{}, nil
	}
	h := s.handles[key]
	if h == nil {
		return reply{}, &replyErr{Message: fmt.Sprintf("unknown handle %s", key), Type: "UnknownHandle", Code: "unknownHandle"}
	}
	if h.broken != nil {
		return reply{}, h.broken
	}
	if op == "read" {
		return reply{state: h.last}, nil
	}
	// step
	now, e := req.now()
	if e != nil {
		return reply{}, e
	}
	a, e := decodeAction(req.Action)
	if e != nil {
		return reply{}, e
	}
	_, e = applyAction(h.ops, h.typed, a, &clock{now: now})
	var out []byte
	if e == nil {
		out, e = encode(h.ops.goType, h.typed)
	}
	var next any
	if e == nil {
		var err error
		if next, err = plainJSON(out); err != nil {
			e = clientErr("EncodeError", "re-reading the encoded "+h.ops.goType, err)
		}
	}
	if e != nil {
		// A failed step leaves the state unchanged: the reducer may have
		// mutated the typed state part-way, so rebuild it from the last
		// encoding (what the harness holds).
		s.restore(h)
		return reply{}, e
	}
	changes := diff(nil, h.mirror, next, nil)
	h.last, h.mirror = out, next
	return reply{changes: encodeChanges(changes)}, nil
}

func (s *server) restore(h *handle) {
	st, e := decodeState(h.ops, h.last)
	if e != nil {
		h.broken = &replyErr{
			Message: "after a failed step the state could not be rebuilt from its last encoding: " + e.Message,
			Type:    e.Type, Code: e.Code,
		}
		h.typed = nil
		return
	}
	h.typed = st
}

func (s *server) roundTrip(req *request) (reply, *replyErr) {
	name, e := stringField("type", req.Type)
	if e != nil {
		return reply{}, e
	}
	wire, e := stringField("wire", req.Wire)
	if e != nil {
		return reply{}, e
	}
	mk, ok := roundTripTypes[name]
	if !ok {
		return reply{}, &replyErr{Message: fmt.Sprintf("roundTrip: the adapter maps no Go type to %q", name), Type: "UnknownType", Code: "badRequest"}
	}
	v := mk()
	what := "ahptypes." + name
	if err := json.Unmarshal([]byte(wire), v); err != nil {
		return reply{}, clientErr("DecodeError", "decoding the wire value as "+what, err)
	}
	out, e := encode(what, v)
	if e != nil {
		return reply{}, e
	}
	text := string(out)
	return reply{wire: &text}, nil
}

// ─── replies ────────────────────────────────────────────────────────────

func idText(id json.RawMessage) []byte {
	if !present(id) {
		return []byte("null")
	}
	return id
}

func replyLine(id json.RawMessage, body reply) []byte {
	var b bytes.Buffer
	b.Grow(len(body.state) + len(body.changes) + 32)
	b.WriteString(`{"id":`)
	b.Write(idText(id))
	if body.state != nil {
		b.WriteString(`,"state":`)
		b.Write(body.state)
	}
	if body.changes != nil {
		b.WriteString(`,"changes":`)
		b.Write(body.changes)
	}
	if body.wire != nil {
		w, _ := json.Marshal(*body.wire)
		b.WriteString(`,"wire":`)
		b.Write(w)
	}
	if body.clockReads != nil {
		b.WriteString(`,"clockReads":`)
		b.WriteString(strconv.Itoa(*body.clockReads))
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func errorLine(id json.RawMessage, e *replyErr) []byte {
	msg, err := json.Marshal(e)
	if err != nil {
		msg = []byte(`{"message":"unencodable error"}`)
	}
	var b bytes.Buffer
	b.WriteString(`{"id":`)
	b.Write(idText(id))
	b.WriteString(`,"error":`)
	b.Write(msg)
	b.WriteString("}\n")
	return b.Bytes()
}

// ─── change lists ───────────────────────────────────────────────────────

// plainJSON decodes JSON into maps, slices and json.Number (numbers keep
// their text, so 1 and 1.0 stay distinct).
func plainJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

type change struct {
	path  []any
	value any
	del   bool
}

func withKey(path []any, k any) []any {
	p := make([]any, len(path)+1)
	copy(p, path)
	p[len(path)] = k
	return p
}

// diff appends to out the changes that turn old into new (docs/adapters.md,
// "Change lists"). The client mutates its state in place, so nothing is shared
// by identity: subtrees are compared by value.
func diff(path []any, old, new any, out []change) []change {
	switch nv := new.(type) {
	case map[string]any:
		ov, ok := old.(map[string]any)
		if !ok {
			return append(out, change{path: path, value: new})
		}
		start := len(out)
		for _, k := range sortedKeys(nv) {
			if o, had := ov[k]; had {
				out = diff(withKey(path, k), o, nv[k], out)
			} else {
				out = append(out, change{path: withKey(path, k), value: nv[k]})
			}
		}
		for _, k := range sortedKeys(ov) {
			if _, kept := nv[k]; !kept {
				out = append(out, change{path: withKey(path, k), del: true})
			}
		}
		if n := len(out) - start; n > 0 && n >= len(nv) {
			out = append(out[:start], change{path: path, value: new})
		}
		return out
	case []any:
		ov, ok := old.([]any)
		if !ok || len(nv) < len(ov) {
			return append(out, change{path: path, value: new})
		}
		start := len(out)
		for i := range ov {
			out = diff(withKey(path, i), ov[i], nv[i], out)
		}
		for i := len(ov); i < len(nv); i++ {
			out = append(out, change{path: withKey(path, i), value: nv[i]})
		}
		if n := len(out) - start; n > 0 && n >= len(nv) {
			out = append(out[:start], change{path: path, value: new})
		}
		return out
	default:
		if scalarEqual(old, new) {
			return out
		}
		return append(out, change{path: path, value: new})
	}
}

func scalarEqual(a, b any) bool {
	switch av := a.(type) {
	case nil:
		return b == nil
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case json.Number:
		bv, ok := b.(json.Number)
		return ok && av == bv
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func encodeChanges(changes []change) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, c := range changes {
		if i > 0 {
			b.WriteByte(',')
		}
		p, _ := json.Marshal(c.path)
		if c.path == nil {
			p = []byte("[]")
		}
		b.WriteString(`{"path":`)
		b.Write(p)
		if c.del {
			b.WriteString(`,"delete":true}`)
			continue
		}
		v, err := json.Marshal(c.value)
		if err != nil { // cannot happen for decoded JSON; keep the line valid
			v = []byte("null")
		}
		b.WriteString(`,"value":`)
		b.Write(v)
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.Bytes()
}

func wholeLineBuffered(in *bufio.Reader) bool {
	n := in.Buffered()
	if n == 0 {
		return false
	}
	buf, _ := in.Peek(n)
	return bytes.IndexByte(buf, '\n') >= 0
}

// ─── main ───────────────────────────────────────────────────────────────

func main() {
	formsFlag := flag.String("forms", "simple,fast", "forms to announce: simple, fast or both (comma-separated)")
	flag.Parse()
	forms := map[string]bool{}
	var announced []string
	for _, f := range strings.Split(*formsFlag, ",") {
		f = strings.TrimSpace(f)
		if f != "simple" && f != "fast" {
			fmt.Fprintf(os.Stderr, "ahp-go-adapter: -forms: unknown form %q (want simple, fast)\n", f)
			os.Exit(2)
		}
		if !forms[f] {
			forms[f] = true
			announced = append(announced, f)
		}
	}

	if v := os.Getenv("AHP_PROTOCOL_VERSION"); v != "" && v != ahptypes.ProtocolVersion {
		fmt.Fprintf(os.Stderr, "ahp-go-adapter: the harness models protocol %s; the Go client speaks %s (supports %s) and is served as it is\n",
			v, ahptypes.ProtocolVersion, strings.Join(ahptypes.SupportedProtocolVersions(), ", "))
	}

	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	ann, _ := json.Marshal(map[string]any{
		"ahpAdapter":                1,
		"name":                      adapterName,
		"forms":                     announced,
		"protocolVersion":           ahptypes.ProtocolVersion,
		"supportedProtocolVersions": ahptypes.SupportedProtocolVersions(),
		"kinds":                     kindOrder,
		"roundTrip":                 true,
		"observesClock":             true,
		"clientVersion":             clientVersion,
		"runtime":                   runtime.Version(),
	})
	out.Write(ann)
	out.WriteByte('\n')
	if out.Flush() != nil {
		os.Exit(1)
	}

	s := &server{forms: forms, handles: map[string]*handle{}}
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	pending := 0
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			out.Write(s.handleLine(line))
			pending++
		}
		if err != nil { // EOF (or a broken stdin): the harness is done
			out.Flush()
			return
		}
		// Flush before blocking on stdin (no whole request buffered), and
		// every flushEvery replies of a pipelined batch.
		if pending >= flushEvery || !wholeLineBuffered(in) {
			if out.Flush() != nil {
				os.Exit(1)
			}
			pending = 0
		}
	}
}
