package tools

import (
	"context"
	"encoding/json"
	"testing"
)

var benchArgs = json.RawMessage(`{"path":"src/main.go","count":3,"tags":["a","b","c"],"config":{"host":"example.org","port":8080},` +
	`"servers":[{"host":"a"},{"host":"b"}],"labels":{"k":"v"},"extra":"ignored"}`)

// BenchmarkDecode measures validation plus typed decoding of a typical argument object.
func BenchmarkDecode(b *testing.B) {
	s := mustCompile[richArgs](b)
	b.ReportAllocs()
	for b.Loop() {
		var a richArgs
		if err := s.Decode(benchArgs, &a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeBaseline is plain json.Unmarshal of the same bytes, without validation.
func BenchmarkDecodeBaseline(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var a richArgs
		if err := json.Unmarshal(benchArgs, &a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecute measures a registry call of a typed tool through one middleware.
func BenchmarkExecute(b *testing.B) {
	var r Registry
	mustRegister(b, &r, shoutTool(b))
	r.Use(func(ctx context.Context, call Call, next Next) Result { return next(ctx, call) })
	call := Call{ID: "1", Name: "shout", Args: json.RawMessage(`{"text":"hello","uppercase":true}`)}
	b.ReportAllocs()
	for b.Loop() {
		if res := r.Execute(context.Background(), call); res.IsError {
			b.Fatal(res.Text())
		}
	}
}
