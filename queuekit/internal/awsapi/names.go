package awsapi

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"
)

// NamePrefixEnv names the variable that puts every DynamoDB table and SQS
// queue of the workshop under one prefix: QUEUEKIT_NAME_PREFIX=jupyter-alice_
// turns the table db_batch_window_requests into
// jupyter-alice_db_batch_window_requests and the queue queuekit-fanout-n1
// into jupyter-alice_queuekit-fanout-n1, on the wire. A room on AWS sets it per
// participant (deploy/room/values.yaml: the pod name and "_", the prefix
// deploy/room/participant-policy.json allows); unset or empty, nothing
// changes.
const NamePrefixEnv = "QUEUEKIT_NAME_PREFIX"

// MaxNamePrefix is the longest prefix accepted: a room name (at most 20
// characters) in Zero to JupyterHub's pod name "jupyter-<name>" and "_" is
// 29; 40 leaves a queue name of 40 characters under SQS's 80.
const MaxNamePrefix = 40

// The longest names the services take (DynamoDB table names: 3 to 255
// characters from a-z A-Z 0-9 _ - .; SQS queue names: 1 to 80 from
// a-z A-Z 0-9 _ -, a FIFO queue's ending in .fifo).
const (
	maxTableName = 255
	maxQueueName = 80
)

// NamePrefixError says that QUEUEKIT_NAME_PREFIX is malformed, or that a
// name under it would be longer than the service allows: bad input, found
// before the request that would use it is sent.
type NamePrefixError struct {
	Prefix string
	Msg    string
}

func (e *NamePrefixError) Error() string {
	return fmt.Sprintf("%s=%q: %s", NamePrefixEnv, e.Prefix, e.Msg)
}

// NamePrefix returns QUEUEKIT_NAME_PREFIX, checked: empty, or 1 to
// MaxNamePrefix characters from a-z A-Z 0-9 _ -, the characters both a
// DynamoDB table name and an SQS queue name allow ('.' is a table's only,
// so it is refused).
func NamePrefix() (string, error) {
	p := os.Getenv(NamePrefixEnv)
	if p == "" {
		return "", nil
	}
	if len(p) > MaxNamePrefix {
		return "", &NamePrefixError{p, fmt.Sprintf("%d characters, at most %d allowed; use a shorter prefix such as jupyter-alice_", len(p), MaxNamePrefix)}
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return "", &NamePrefixError{p, fmt.Sprintf("character %q: use only a-z, A-Z, 0-9, '_' and '-' (names valid for both DynamoDB tables and SQS queues), e.g. jupyter-alice_", r)}
		}
	}
	return p, nil
}

// Prefixed returns name under prefix: name itself when prefix is empty, the
// name already starts with it (a name read back from a reply and sent again)
// or the name is an ARN (DynamoDB takes a table's ARN for its name).
func Prefixed(prefix, name string) string {
	if prefix == "" || strings.HasPrefix(name, prefix) || strings.HasPrefix(name, "arn:") {
		return name
	}
	return prefix + name
}

// namesMiddleware puts every table and queue name of a request under
// prefix and takes it off the names in the reply, so the code above sees
// the names it chose while the service sees only the participant's own:
// request fields TableName, QueueName, QueueNamePrefix (set to the prefix
// when absent, so ListQueues lists only the participant's queues),
// ExclusiveStartTableName and the keys of RequestItems, at any depth
// (TransactItems too); reply fields TableName and LastEvaluatedTableName,
// the list TableNames (names without the prefix are dropped: another
// participant's), and the keys of Responses, UnprocessedItems,
// UnprocessedKeys and ItemCollectionMetrics. A name that would be longer
// than the service allows fails with *NamePrefixError before it is sent.
func namesMiddleware(prefix string) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("queuekit.NamePrefix",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if err := renameRequest(reflect.ValueOf(in.Parameters), prefix); err != nil {
					return middleware.InitializeOutput{}, middleware.Metadata{}, err
				}
				out, md, err := next.HandleInitialize(ctx, in)
				if err == nil {
					renameReply(reflect.ValueOf(out.Result), prefix)
				}
				return out, md, err
			}), middleware.Before)
	}
}

// addNames installs namesMiddleware on every client built from cfg.
func addNames(cfg *aws.Config, prefix string) {
	if prefix != "" {
		cfg.APIOptions = append(cfg.APIOptions, namesMiddleware(prefix))
	}
}

// walk calls str for each settable *string field and mp for each map field
// keyed by strings, through pointers, structs and slices (never into maps
// or interfaces: items and attribute values hold no names).
func walk(v reflect.Value, str func(field string, s *string) error, mp func(field string, m reflect.Value) error, list func(field string, l reflect.Value)) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return walk(v.Elem(), str, mp, list)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.String {
			return nil
		}
		for i := range v.Len() {
			if err := walk(v.Index(i), str, mp, list); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f, fv := t.Field(i), v.Field(i)
			if !f.IsExported() || !fv.CanSet() {
				continue
			}
			switch {
			case f.Type == reflect.TypeFor[*string]():
				// A nil field is passed as ""; it stays nil unless str sets it.
				var s string
				if !fv.IsNil() {
					s = *fv.Interface().(*string)
				}
				was := s
				if err := str(f.Name, &s); err != nil {
					return err
				}
				if s != was {
					fv.Set(reflect.ValueOf(&s))
				}
			case f.Type.Kind() == reflect.Map && f.Type.Key().Kind() == reflect.String:
				if err := mp(f.Name, fv); err != nil {
					return err
				}
			case f.Type == reflect.TypeFor[[]string]():
				list(f.Name, fv)
			default:
				if err := walk(fv, str, mp, list); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// renameKeys returns a copy of map m with each key passed through fn
// (a key fn drops, returning false, is left out).
func renameKeys(m reflect.Value, fn func(string) (string, bool)) reflect.Value {
	if m.IsNil() {
		return m
	}
	out := reflect.MakeMapWithSize(m.Type(), m.Len())
	for it := m.MapRange(); it.Next(); {
		if k, ok := fn(it.Key().String()); ok {
			out.SetMapIndex(reflect.ValueOf(k).Convert(m.Type().Key()), it.Value())
		}
	}
	return out
}

func renameRequest(v reflect.Value, prefix string) error {
	check := func(name string, limit int, what string) error {
		if len(name) > limit {
			return &NamePrefixError{prefix, fmt.Sprintf("%s %s would be %d characters, the service allows %d; use a shorter prefix or name", what, name, len(name), limit)}
		}
		return nil
	}
	return walk(v, func(field string, s *string) error {
		switch {
		case *s == "" && field != "QueueNamePrefix":
			// absent: nothing to rename (ListQueues without a prefix gets
			// the participant's, below, so it lists only their queues)
		case field == "TableName", field == "ExclusiveStartTableName":
			*s = Prefixed(prefix, *s)
			return check(*s, maxTableName, "table")
		case field == "QueueName", field == "QueueNamePrefix":
			*s = Prefixed(prefix, *s)
			return check(*s, maxQueueName, "queue")
		}
		return nil
	}, func(field string, m reflect.Value) error {
		if field != "RequestItems" {
			return nil
		}
		var err error
		m.Set(renameKeys(m, func(k string) (string, bool) {
			k = Prefixed(prefix, k)
			if e := check(k, maxTableName, "table"); e != nil && err == nil {
				err = e
			}
			return k, true
		}))
		return err
	}, func(string, reflect.Value) {})
}

func renameReply(v reflect.Value, prefix string) {
	strip := func(k string) (string, bool) {
		if strings.HasPrefix(k, prefix) {
			return k[len(prefix):], true
		}
		return k, true
	}
	_ = walk(v, func(field string, s *string) error {
		if *s != "" && (field == "TableName" || field == "LastEvaluatedTableName") {
			*s, _ = strip(*s)
		}
		return nil
	}, func(field string, m reflect.Value) error {
		switch field {
		case "Responses", "UnprocessedItems", "UnprocessedKeys", "ItemCollectionMetrics":
			m.Set(renameKeys(m, strip))
		}
		return nil
	}, func(field string, l reflect.Value) {
		if field != "TableNames" {
			return
		}
		own := reflect.MakeSlice(l.Type(), 0, l.Len())
		for i := range l.Len() {
			if n := l.Index(i).String(); strings.HasPrefix(n, prefix) {
				own = reflect.Append(own, reflect.ValueOf(n[len(prefix):]))
			}
		}
		l.Set(own)
	})
}
