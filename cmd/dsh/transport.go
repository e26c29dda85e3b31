package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine is the longest JSON-RPC message dsh accepts on a line: the SDK's own default frame
// limit.
const maxLine = mcp.DefaultMaxLineLength

// lineTransport is the SDK's newline-delimited JSON transport behind a guard that keeps one bad
// line from ending the session. The SDK's reader cannot resynchronise after a line that is not
// a JSON-RPC message (it ends the connection), so the guard reads line by line and answers a
// bad line itself with a JSON-RPC error response, then goes on with the next line:
//
//   - not JSON: -32700 "parse error: …", id null;
//   - JSON but not a JSON-RPC 2.0 message, or a batch (MCP dropped batches in 2025-06-18):
//     -32600 "invalid request: …", with the line's id when it has a usable one, else null;
//   - longer than max bytes: -32600 "invalid request: message of N bytes exceeds the limit
//     of M bytes", id null.
//
// Blank lines are skipped. Everything else goes to the SDK untouched; the protocol itself is
// the SDK's. The guard's responses and the SDK's share one writer lock, so lines never mix.
func lineTransport(r io.ReadCloser, w io.WriteCloser, max int) mcp.Transport {
	lw := &lockedWriter{w: w}
	return &mcp.IOTransport{
		Reader:        &guardReader{r: bufio.NewReaderSize(r, 64<<10), c: r, w: lw, max: max},
		Writer:        lw,
		MaxLineLength: -1, // the guard enforces max
	}
}

// lockedWriter serialises writes: the SDK writes one whole message per call, and so does the
// guard.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// guardReader passes valid JSON-RPC lines through and answers the others (see lineTransport).
// It is used by the SDK's single reading goroutine only.
type guardReader struct {
	r    *bufio.Reader
	c    io.Closer
	w    *lockedWriter
	max  int
	pend []byte // the rest of the current good line, newline included
}

func (g *guardReader) Read(p []byte) (int, error) {
	for len(g.pend) == 0 {
		line, err := g.nextLine()
		if err != nil {
			return 0, err
		}
		g.pend = line
	}
	n := copy(p, g.pend)
	g.pend = g.pend[n:]
	return n, nil
}

func (g *guardReader) Close() error { return g.c.Close() }

// nextLine returns the next good line, newline-terminated, answering the bad ones on the way.
// It returns io.EOF at the end of the input (a last line without a newline still counts) and
// any other read error as is.
func (g *guardReader) nextLine() ([]byte, error) {
	for {
		line, size, err := g.readLine()
		if err != nil && (size == 0 || !errors.Is(err, io.EOF)) {
			return nil, err
		}
		if size > g.max {
			if werr := g.reply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: message of %d bytes exceeds the limit of %d bytes", size, g.max)); werr != nil {
				return nil, werr
			}
			continue
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		if id, code, msg := check(trimmed); code != 0 {
			if werr := g.reply(id, code, msg); werr != nil {
				return nil, werr
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		return append(trimmed, '\n'), nil
	}
}

// readLine reads one line, keeping at most max+1 bytes of it, and returns what it kept and the
// line's full size (newline excluded). err is the read error that ended the line, if any.
func (g *guardReader) readLine() (line []byte, size int, err error) {
	for {
		chunk, rerr := g.r.ReadSlice('\n')
		size += len(chunk)
		if len(line) <= g.max {
			line = append(line, chunk...)
		}
		switch {
		case rerr == nil:
			return bytes.TrimSuffix(line, []byte("\n")), size - 1, nil
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		default:
			return line, size, rerr
		}
	}
}

// check returns a zero code for a line holding one JSON-RPC 2.0 message, and otherwise the
// error code and message of the response, with the id to answer (nil for null).
func check(line []byte) (id json.RawMessage, code int, msg string) {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return nil, jsonrpc.CodeParseError, "parse error: " + err.Error()
	}
	if line[0] == '[' {
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported; send one message per line"
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return usableID(line), jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	return nil, 0, ""
}

// usableID returns the "id" member of an object line when it is a string or an integer, the
// ids a client can match a response to; nil otherwise.
func usableID(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return nil
	}
	switch x := v.(type) {
	case string:
		return m.ID
	case float64:
		if x == float64(int64(x)) {
			return m.ID
		}
	}
	return nil
}

// reply writes one JSON-RPC error response with id (nil: null), code and message.
func (g *guardReader) reply(id json.RawMessage, code int, message string) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	if err != nil {
		return err
	}
	_, err = g.w.Write(append(b, '\n'))
	return err
}
