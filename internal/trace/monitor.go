package trace

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// monitorParser reads the output of Redis MONITOR (redis-cli monitor):
//
//	1700000000.123456 [0 127.0.0.1:5000] "SET" "k" "v"
//
// seconds.microseconds, [db client] (the client is host:port, unix:path
// or lua), then each argument quoted as Redis's sdscatrepr quotes it:
// \\ \" \n \r \t \a \b, and \xHH for any other byte that is not printable.
// redis-cli's first line, OK, is skipped.
type monitorParser struct {
	o    origin
	args [][]byte
	buf  []byte // the unquoted arguments, back to back
}

func (*monitorParser) secondResolution() bool { return false }

// monitorLine: a line that begins like a MONITOR line.
func monitorLine(line []byte) bool {
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 || sp+1 >= len(line) || line[sp+1] != '[' {
		return false
	}
	sec, usec, ok := bytes.Cut(line[:sp], []byte("."))
	_, err1 := parseInt(sec)
	_, err2 := parseInt(usec)
	return ok && err1 == nil && err2 == nil
}

func (p *monitorParser) parse(line []byte, _ int64, out []Request) ([]Request, error) {
	if string(line) == "OK" {
		return out, nil
	}
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return out, errors.New("not a MONITOR line: want `SECONDS.MICROS [DB CLIENT] \"CMD\" …`")
	}
	sec, usec, ok := bytes.Cut(line[:sp], []byte("."))
	s, err1 := parseInt(sec)
	us, err2 := parseInt(usec)
	if !ok || err1 != nil || err2 != nil || len(usec) != 6 || s < 0 {
		return out, fmt.Errorf("time %q: want seconds.microseconds", line[:sp])
	}
	rest := line[sp+1:]
	if len(rest) == 0 || rest[0] != '[' {
		return out, errors.New("no [db client] after the time")
	}
	end := bytes.IndexByte(rest, ']')
	if end < 0 {
		return out, errors.New("[db client] not closed")
	}
	_, client, ok := bytes.Cut(rest[1:end], []byte(" "))
	if !ok {
		return out, fmt.Errorf("%q: want [db client]", rest[:end+1])
	}
	args, err := p.unquoteArgs(rest[end+1:])
	if err != nil {
		return out, err
	}
	if len(args) == 0 {
		return out, errors.New("no command")
	}
	q := Request{At: time.Duration(p.o.rel(s*1e6+us)) * time.Microsecond, Client: clientID(client)}
	if err := mapCommand(&q, args); err != nil {
		return out, fmt.Errorf("%s: %v", strings.ToUpper(q.Cmd), err)
	}
	return append(out, q), nil
}

// unquoteArgs parses the quoted arguments of a MONITOR line.
func (p *monitorParser) unquoteArgs(s []byte) ([][]byte, error) {
	p.buf = p.buf[:0]
	var bounds [][2]int
	for {
		s = bytes.TrimLeft(s, " ")
		if len(s) == 0 {
			break
		}
		if s[0] != '"' {
			return nil, fmt.Errorf("argument %d not quoted: %.20q", len(bounds)+1, s)
		}
		start := len(p.buf)
		i := 1
		closed := false
		for i < len(s) {
			c := s[i]
			if c == '"' {
				closed = true
				i++
				break
			}
			if c != '\\' {
				p.buf = append(p.buf, c)
				i++
				continue
			}
			if i+1 >= len(s) {
				return nil, errors.New("a line ends in a backslash")
			}
			switch e := s[i+1]; e {
			case '\\', '"':
				p.buf = append(p.buf, e)
			case 'n':
				p.buf = append(p.buf, '\n')
			case 'r':
				p.buf = append(p.buf, '\r')
			case 't':
				p.buf = append(p.buf, '\t')
			case 'a':
				p.buf = append(p.buf, '\a')
			case 'b':
				p.buf = append(p.buf, '\b')
			case 'x':
				if i+3 >= len(s) {
					return nil, errors.New(`a \x escape cut short`)
				}
				v, err := strconv.ParseUint(string(s[i+2:i+4]), 16, 8)
				if err != nil {
					return nil, fmt.Errorf(`bad escape \x%s`, s[i+2:i+4])
				}
				p.buf = append(p.buf, byte(v))
				i += 2
			default:
				return nil, fmt.Errorf(`unknown escape \%c`, e)
			}
			i += 2
		}
		if !closed {
			return nil, fmt.Errorf("argument %d: quote not closed", len(bounds)+1)
		}
		if i < len(s) && s[i] != ' ' {
			return nil, fmt.Errorf("argument %d: no space after its closing quote", len(bounds)+1)
		}
		bounds = append(bounds, [2]int{start, len(p.buf)})
		s = s[i:]
	}
	p.args = p.args[:0]
	for _, b := range bounds {
		p.args = append(p.args, p.buf[b[0]:b[1]:b[1]])
	}
	return p.args, nil
}

// mapCommand maps a Redis command onto q: the string commands each to
// what a key-value store can do (docs/replay.md lists them); any other
// keeps its name with OpNone. args[0] is the command.
func mapCommand(q *Request, args [][]byte) error {
	q.Cmd = strings.ToLower(string(args[0]))
	a := args[1:]
	need := func(n int) error {
		if len(a) < n {
			return fmt.Errorf("%d arguments, want at least %d", len(a), n)
		}
		return nil
	}
	seconds := func(b []byte, unit time.Duration) (time.Duration, error) {
		n, err := parseInt(b)
		if err != nil {
			return 0, fmt.Errorf("time %q: want an integer", b)
		}
		return time.Duration(max(n, 1)) * unit, nil
	}
	switch q.Cmd {
	case "get", "strlen", "exists", "getex":
		if err := need(1); err != nil {
			return err
		}
		q.Op, q.Keys = OpGet, a[:1]
		if q.Cmd == "exists" {
			q.Keys = a
		}
	case "mget":
		if err := need(1); err != nil {
			return err
		}
		q.Op, q.Keys = OpGet, a
	case "set", "setnx":
		if err := need(2); err != nil {
			return err
		}
		q.Op, q.Keys, q.ValueSize = OpSet, a[:1], len(a[1])
		getToo := false
		for i := 2; i < len(a); i++ {
			switch strings.ToLower(string(a[i])) {
			case "ex", "px":
				if i+1 >= len(a) {
					return fmt.Errorf("%s without its time", a[i])
				}
				unit := time.Second
				if strings.EqualFold(string(a[i]), "px") {
					unit = time.Millisecond
				}
				ttl, err := seconds(a[i+1], unit)
				if err != nil {
					return err
				}
				q.TTL = ttl
				i++
			case "exat", "pxat":
				i++ // an absolute time: the replay has no clock of the recording's
			case "get":
				getToo = true
			}
		}
		if getToo { // SET … GET: the old value is read, as GETSET
			q.Op, q.Change = OpRMW, ChangeReplace
		}
	case "setex", "psetex":
		if err := need(3); err != nil {
			return err
		}
		unit := time.Second
		if q.Cmd == "psetex" {
			unit = time.Millisecond
		}
		ttl, err := seconds(a[1], unit)
		if err != nil {
			return err
		}
		q.Op, q.Keys, q.ValueSize, q.TTL = OpSet, a[:1], len(a[2]), ttl
	case "mset", "msetnx":
		if len(a) == 0 || len(a)%2 != 0 {
			return fmt.Errorf("%d arguments, want key value pairs", len(a))
		}
		q.Op = OpSet
		for i := 0; i < len(a); i += 2 {
			q.Keys = append(q.Keys, a[i])
			q.ValueSize = max(q.ValueSize, len(a[i+1]))
		}
	case "del", "unlink":
		if err := need(1); err != nil {
			return err
		}
		q.Op, q.Keys = OpDelete, a
	case "getdel":
		if err := need(1); err != nil {
			return err
		}
		q.Op, q.Keys, q.Change = OpRMW, a[:1], ChangeDelete
	case "getset":
		if err := need(2); err != nil {
			return err
		}
		q.Op, q.Keys, q.Change, q.ValueSize = OpRMW, a[:1], ChangeReplace, len(a[1])
	case "incr", "decr":
		if err := need(1); err != nil {
			return err
		}
		q.Op, q.Keys, q.Change, q.Delta = OpRMW, a[:1], ChangeIncr, 1
		if q.Cmd == "decr" {
			q.Delta = -1
		}
	case "incrby", "decrby":
		if err := need(2); err != nil {
			return err
		}
		d, err := parseInt(a[1])
		if err != nil {
			return fmt.Errorf("increment %q: want an integer", a[1])
		}
		if q.Cmd == "decrby" {
			d = -d
		}
		q.Op, q.Keys, q.Change, q.Delta = OpRMW, a[:1], ChangeIncr, d
	case "append":
		if err := need(2); err != nil {
			return err
		}
		q.Op, q.Keys, q.Change, q.ValueSize = OpRMW, a[:1], ChangeAppend, len(a[1])
	case "expire", "pexpire":
		if err := need(2); err != nil {
			return err
		}
		unit := time.Second
		if q.Cmd == "pexpire" {
			unit = time.Millisecond
		}
		ttl, err := seconds(a[1], unit)
		if err != nil {
			return err
		}
		q.Op, q.Keys, q.Change, q.TTL = OpRMW, a[:1], ChangeTTL, ttl
	default:
		q.Op = OpNone
	}
	return nil
}
