package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// counted returns a raw tool named name that counts its runs in n and echoes its arguments.
func counted(name string, n *atomic.Int32) *Tool {
	return rawTool(name, func(ctx context.Context, call Call) (Result, error) {
		n.Add(1)
		return Text("ran " + string(call.Args)), nil
	})
}

func verdict(v Verdict, reason string, grants ...string) Before {
	return func(context.Context, Call) Decision { return Decision{Verdict: v, Reason: reason, Grants: grants} }
}

// approverOf returns an approver answering with a and err, counting its calls in n (when not
// nil).
func approverOf(a Approval, err error, n *atomic.Int32) Approver {
	return ApproverFunc(func(ctx context.Context, call Call, d Decision) (Approval, error) {
		if n != nil {
			n.Add(1)
		}
		return a, err
	})
}

func TestBeforeStages(t *testing.T) {
	errBroken := errors.New("the client hung up")
	tests := []struct {
		name     string
		stages   []Before
		approver Approver
		asked    int32 // approver calls expected
		wantRun  bool
		wantCode string
		wantText string // prefix of the result text
	}{
		{name: "no stages", wantRun: true, wantText: "ran"},
		{name: "all allow", stages: []Before{verdict(VerdictAllow, ""), verdict(VerdictAllow, "")}, wantRun: true, wantText: "ran"},
		{name: "deny", stages: []Before{verdict(VerdictDeny, "rm is denied by rule \"rm\"")},
			wantCode: CodeDenied, wantText: "Error: rm is denied by rule \"rm\""},
		{name: "ask without approver", stages: []Before{verdict(VerdictAsk, "git push needs approval")},
			wantCode: CodeApprovalRequired, wantText: "Error: approval required: git push needs approval. A person must approve this call and no one can be asked in this session. Do not try to get the same effect another way"},
		{name: "deny wins over an earlier ask", stages: []Before{verdict(VerdictAsk, "ask"), verdict(VerdictDeny, "no")},
			approver: approverOf(ApproveOnce, nil, nil), wantCode: CodeDenied, wantText: "Error: no"},
		{name: "unknown verdict refuses", stages: []Before{verdict(Verdict(9), "odd")}, wantCode: CodeDenied, wantText: "Error: odd"},
		{name: "ask approved once", stages: []Before{verdict(VerdictAsk, "ask")},
			approver: approverOf(ApproveOnce, nil, nil), asked: 1, wantRun: true, wantText: "ran"},
		{name: "two asks each approved", stages: []Before{verdict(VerdictAsk, "a"), verdict(VerdictAsk, "b")},
			approver: approverOf(ApproveOnce, nil, nil), asked: 2, wantRun: true, wantText: "ran"},
		{name: "ask declined", stages: []Before{verdict(VerdictAsk, "`git push` matches ask rule")},
			approver: approverOf(Decline, nil, nil), asked: 1, wantCode: CodeDeclined,
			wantText: "Error: a person declined this call (`git push` matches ask rule). Do not retry it"},
		{name: "approver has no one to ask", stages: []Before{verdict(VerdictAsk, "why")},
			approver: approverOf(ApproveOnce, fmt.Errorf("mcp: %w", ErrNoApprover), nil), asked: 1, wantCode: CodeApprovalRequired,
			wantText: "Error: approval required: why. A person must approve"},
		{name: "asking failed", stages: []Before{verdict(VerdictAsk, "why")},
			approver: approverOf(ApproveOnce, errBroken, nil), asked: 1, wantCode: CodeApprovalRequired,
			wantText: "Error: approval failed, the call did not run: the client hung up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Registry
			var runs, asked atomic.Int32
			mustRegister(t, &r, counted("run", &runs))
			for _, s := range tt.stages {
				r.UseBefore(s)
			}
			if tt.approver != nil {
				inner := tt.approver
				r.SetApprover(ApproverFunc(func(ctx context.Context, call Call, d Decision) (Approval, error) {
					asked.Add(1)
					return inner.Approve(ctx, call, d)
				}))
			}
			res := r.Execute(context.Background(), Call{ID: "7", Name: "run", Args: json.RawMessage(`{}`)})
			if got := runs.Load() == 1; got != tt.wantRun {
				t.Errorf("tool ran: %v, want %v", got, tt.wantRun)
			}
			if !strings.HasPrefix(res.Text(), tt.wantText) || res.Code != tt.wantCode || res.IsError != (tt.wantCode != "") || res.CallID != "7" {
				t.Errorf("result %q code %q isError %v callID %q; want prefix %q code %q", res.Text(), res.Code, res.IsError, res.CallID, tt.wantText, tt.wantCode)
			}
			if asked.Load() != tt.asked {
				t.Errorf("approver asked %d times, want %d", asked.Load(), tt.asked)
			}
		})
	}
}

// TestDenyStopsLaterStages checks that a stage after a deny is never consulted.
func TestDenyStopsLaterStages(t *testing.T) {
	var r Registry
	var runs, later atomic.Int32
	mustRegister(t, &r, counted("run", &runs))
	r.UseBefore(verdict(VerdictDeny, "no"))
	r.UseBefore(func(context.Context, Call) Decision { later.Add(1); return Allow() })
	r.Execute(context.Background(), Call{Name: "run"})
	if later.Load() != 0 || runs.Load() != 0 {
		t.Errorf("after a deny: later stage ran %d times, tool %d times; want 0, 0", later.Load(), runs.Load())
	}
}

// TestApprovalForTheSession checks that an approval for the session covers later asks of the
// same owner with the same grants, and nothing else: another owner, other grants, an ask
// without grants, an owner that was forgotten.
func TestApprovalForTheSession(t *testing.T) {
	var r Registry
	var runs, asked atomic.Int32
	mustRegister(t, &r, counted("run", &runs))
	r.UseBefore(func(ctx context.Context, call Call) Decision {
		var a struct{ Grants []string }
		_ = json.Unmarshal(call.Args, &a)
		return Decision{Verdict: VerdictAsk, Reason: "asked", Grants: a.Grants}
	})
	r.SetApprover(approverOf(ApproveSession, nil, &asked))
	call := func(owner, grants string) {
		t.Helper()
		res := r.Execute(context.Background(), Call{Name: "run", Args: json.RawMessage(`{"Grants":` + grants + `}`), Agent: &Agent{Owner: owner}})
		if res.IsError {
			t.Fatalf("%s %s: %s", owner, grants, res.Text())
		}
	}
	steps := []struct {
		owner, grants string
		wantAsked     int32 // total so far
	}{
		{"a", `["git push"]`, 1},
		{"a", `["git push"]`, 1},        // covered
		{"a", `["git push","rm x"]`, 2}, // one grant not covered: asked, both granted now
		{"a", `["rm x"]`, 2},            // covered by the previous approval
		{"b", `["git push"]`, 3},        // another owner
		{"a", `[]`, 4},                  // nothing to remember: asked every time
		{"a", `[]`, 5},                  //
		{"", `["git push"]`, 6},         // no owner: nothing remembered
		{"", `["git push"]`, 7},         //
		{"forget-a", ``, 7},             // Forget a
		{"a", `["git push"]`, 8},        // asked again
		{"b", `["git push"]`, 8},        // b keeps its approvals
	}
	for _, s := range steps {
		if s.owner == "forget-a" {
			r.Forget("a")
			continue
		}
		call(s.owner, s.grants)
		if asked.Load() != s.wantAsked {
			t.Fatalf("after %s %s: asked %d times, want %d", s.owner, s.grants, asked.Load(), s.wantAsked)
		}
	}
	if runs.Load() != int32(len(steps)-1) {
		t.Errorf("tool ran %d times, want %d", runs.Load(), len(steps)-1)
	}
}

// TestStagesComeLast checks that the stages are the innermost link before the tool and the
// outermost after it, whatever the order middlewares and stages were added in: a stage judges
// the call the tool receives even when a middleware rewrote it, and an After stage sees what a
// middleware added to the result.
func TestStagesComeLast(t *testing.T) {
	var r Registry
	var runs atomic.Int32
	mustRegister(t, &r, counted("run", &runs))
	var judged string
	r.UseBefore(func(ctx context.Context, call Call) Decision {
		judged = string(call.Args)
		if strings.Contains(judged, "rm") {
			return Decision{Verdict: VerdictDeny, Reason: "rm is denied"}
		}
		return Allow()
	})
	r.UseAfter(Redact([]Secret{{Name: "API_TOKEN", Value: "s3cr3t-value"}}))
	// Added after the stages, so "inner" as middlewares go: still outside the stages.
	r.Use(func(ctx context.Context, call Call, next Next) Result {
		call.Args = json.RawMessage(`"rm -rf /"`) // what the documentation forbids, done anyway
		res := next(ctx, call)
		res.Content = append(res.Content, TextContent(" leaked s3cr3t-value"))
		return res
	})
	res := r.Execute(context.Background(), Call{Name: "run", Args: json.RawMessage(`"ls"`)})
	if runs.Load() != 0 || judged != `"rm -rf /"` {
		t.Errorf("stage judged %s and the tool ran %d times; want the rewritten call judged and refused", judged, runs.Load())
	}
	if got := res.Text(); got != "Error: rm is denied leaked [redacted: API_TOKEN]" || res.Code != CodeDenied {
		t.Errorf("result %q (%s); want the middleware's addition redacted by the After stage", got, res.Code)
	}
}

func TestAfterStages(t *testing.T) {
	var runs atomic.Int32
	tests := []struct {
		name     string
		stages   []After
		wantText string
		wantCode string
	}{
		{"accept", []After{func(context.Context, Call, Result) Outcome { return Outcome{Action: Accept} }}, `ran {"k":1}`, ""},
		{"replace then see the replacement", []After{
			func(_ context.Context, _ Call, r Result) Outcome {
				return Outcome{Action: Replace, Result: Text(r.Text() + "+1")}
			},
			func(_ context.Context, _ Call, r Result) Outcome {
				return Outcome{Action: Replace, Result: Text(r.Text() + "+2")}
			},
		}, `ran {"k":1}+1+2`, ""},
		{"block", []After{func(context.Context, Call, Result) Outcome { return Outcome{Action: Block, Reason: "it holds a key"} }},
			"Error: result blocked: it holds a key", CodeBlocked},
		{"panic blocks without the text", []After{func(context.Context, Call, Result) Outcome { panic("boom") }},
			`Error: result blocked: a result stage of tool "run" panicked`, CodeBlocked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Registry
			mustRegister(t, &r, counted("run", &runs))
			for _, s := range tt.stages {
				r.UseAfter(s)
			}
			res := r.Execute(context.Background(), Call{ID: "9", Name: "run", Args: json.RawMessage(`{"k":1}`)})
			if res.Text() != tt.wantText || res.Code != tt.wantCode || res.CallID != "9" {
				t.Errorf("result %q code %q callID %q; want %q code %q", res.Text(), res.Code, res.CallID, tt.wantText, tt.wantCode)
			}
		})
	}
}

// TestStagePanics checks that a Before stage that panics refuses the call, and that After stages
// still see the panic result of a tool (its text may hold anything).
func TestStagePanics(t *testing.T) {
	var r Registry
	var runs atomic.Int32
	mustRegister(t, &r, counted("run", &runs))
	remove := r.UseBefore(func(context.Context, Call) Decision { panic("stage bug") })
	res := r.Execute(context.Background(), Call{Name: "run"})
	if runs.Load() != 0 || res.Code != CodePanic || res.Text() != `Error: tool "run" panicked: stage bug` {
		t.Errorf("panicking stage: tool ran %d times, result %q (%s)", runs.Load(), res.Text(), res.Code)
	}
	remove()
	mustRegister(t, &r, rawTool("boom", func(context.Context, Call) (Result, error) { panic("password=hunter2hunter2") }))
	r.UseAfter(Redact([]Secret{{Name: "PW", Value: "hunter2hunter2"}}))
	res = r.Execute(context.Background(), Call{Name: "boom"})
	if res.Text() != `Error: tool "boom" panicked: password=[redacted: PW]` {
		t.Errorf("panic result %q; want it redacted", res.Text())
	}
}

func TestRedact(t *testing.T) {
	secrets := []Secret{
		{Name: "SHORT", Value: "1234567"},            // under MinSecretLen: ignored
		{Name: "API_KEY", Value: "abcdefgh"},         // exactly MinSecretLen
		{Name: "LONG_TOKEN", Value: "abcdefgh-ijkl"}, // holds API_KEY's value: the longer wins
		{Name: "SAME", Value: "abcdefgh"},            // same value again: reported as API_KEY
		{Name: "EMPTY", Value: ""},
	}
	stage := Redact(secrets)
	tests := []struct {
		name string
		in   Result
		want Result
		act  Action
	}{
		{"nothing to hide", Text("hello 1234567"), Text("hello 1234567"), Accept},
		{"one value", Text("key=abcdefgh\n"), Text("key=[redacted: API_KEY]\n"), Replace},
		{"longer first, repeated", Text("abcdefgh-ijkl abcdefgh abcdefgh-ijkl"),
			Text("[redacted: LONG_TOKEN] [redacted: API_KEY] [redacted: LONG_TOKEN]"), Replace},
		{"adjacent", Text("abcdefghabcdefgh"), Text("[redacted: API_KEY][redacted: API_KEY]"), Replace},
		{"every text block, others untouched",
			Result{Content: []Content{TextContent("a abcdefgh"), {Type: "image", Text: "abcdefgh"}, TextContent("b")}},
			Result{Content: []Content{TextContent("a [redacted: API_KEY]"), {Type: "image", Text: "abcdefgh"}, TextContent("b")}}, Replace},
		{"failed results too", ErrorResult(errors.New("bad token abcdefgh")),
			Result{Content: []Content{TextContent("Error: [redacted: API_KEY]")}}, Replace},
		{"structured content, nested strings, numbers kept exact",
			Result{Content: []Content{TextContent("x")}, Structured: json.RawMessage(`{"stdout":{"text":"k=abcdefgh <b>","bytes":12345678901234567890},"list":["abcdefgh-ijkl"]}`)},
			Result{Content: []Content{TextContent("x")}, Structured: json.RawMessage(`{"list":["[redacted: LONG_TOKEN]"],"stdout":{"bytes":12345678901234567890,"text":"k=[redacted: API_KEY] <b>"}}`)}, Replace},
		{"structured content without a secret", Result{Content: []Content{TextContent("x")}, Structured: json.RawMessage(`{"a":"b"}`)},
			Result{Content: []Content{TextContent("x")}, Structured: json.RawMessage(`{"a":"b"}`)}, Accept},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			orig := in.Text()
			o := stage(context.Background(), Call{}, in)
			if o.Action != tt.act {
				t.Fatalf("action %v, want %v", o.Action, tt.act)
			}
			if in.Text() != orig {
				t.Errorf("the input result was modified: %q", in.Text())
			}
			if o.Action != Replace {
				return
			}
			if tt.name == "failed results too" {
				tt.want.Content[0].Text = "Error: bad token [redacted: API_KEY]"
			}
			if fmt.Sprint(o.Result.Content) != fmt.Sprint(tt.want.Content) || o.Result.IsError != tt.in.IsError {
				t.Errorf("got %v, want %v", o.Result.Content, tt.want.Content)
			}
			if string(o.Result.Structured) != string(tt.want.Structured) {
				t.Errorf("structured %s, want %s", o.Result.Structured, tt.want.Structured)
			}
		})
	}
	if o := Redact(nil)(context.Background(), Call{}, Text("abcdefgh")); o.Action != Accept {
		t.Errorf("no secrets: action %v, want Accept", o.Action)
	}
}

// TestApprovedReachesTheTool checks that a tool sees, in its context, exactly the asks a person
// approved for the call: none without an ask, the ask after an approval (once or for the
// session, and on a later call the session approval covers), and that a declined ask never
// runs the tool.
func TestApprovedReachesTheTool(t *testing.T) {
	var seen [][]Decision
	tool, err := New("t", "Tool.", func(ctx context.Context, call Call, a struct {
		Ask bool `json:"ask,omitempty"`
	}) (Result, error) {
		seen = append(seen, Approved(ctx))
		return Text("ran"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var r Registry
	if _, err := r.Register(tool); err != nil {
		t.Fatal(err)
	}
	ask := Decision{Verdict: VerdictAsk, Reason: "needs a person", Grants: []string{"g"}}
	r.UseBefore(func(_ context.Context, call Call) Decision {
		if strings.Contains(string(call.Args), "ask") {
			return ask
		}
		return Allow()
	})
	answer := ApproveSession
	r.SetApprover(ApproverFunc(func(context.Context, Call, Decision) (Approval, error) { return answer, nil }))
	agent := &Agent{Owner: "o"}
	exec := func(args string) Result {
		return r.Execute(context.Background(), Call{ID: "1", Name: "t", Args: json.RawMessage(args), Agent: agent})
	}
	exec(`{}`)
	exec(`{"ask":true}`) // approved for the session
	answer = Decline
	exec(`{"ask":true}`) // covered by the session's approval: not asked again
	if res := exec(`{"ask":true}`); res.IsError {
		t.Fatalf("a call the session's approval covers was refused: %s", res.Text())
	}
	agent = &Agent{Owner: "other"}
	if res := exec(`{"ask":true}`); !res.IsError {
		t.Fatal("a declined ask ran the tool")
	}
	if len(seen) != 4 || seen[0] != nil || len(seen[1]) != 1 || seen[1][0].Reason != ask.Reason || len(seen[2]) != 1 || len(seen[3]) != 1 {
		t.Errorf("approvals seen by the tool: %+v", seen)
	}
}
