package limits

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// PartitionOf is the partition of table (index "" for the table itself)
// that the partition key value pk maps to now, as Stats numbers them: so a
// per-partition Sample can be read as one key's (or the few keys' that
// share the partition). pk is typed as DynamoDB types it (the string
// "SHARD" and the number 1 are different keys). The error names a table
// or index the layer has not seen created or described.
func (l *Layer) PartitionOf(table, index string, pk types.AttributeValue) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.tables[table]
	if t == nil {
		return 0, fmt.Errorf("partition of a key of %s: the layer knows no such table (it learns a table when a request names it)", table)
	}
	ix := t.index(index)
	if ix == nil || len(ix.parts) == 0 {
		return 0, fmt.Errorf("partition of a key of %s: the layer knows no index %q of it", table, index)
	}
	v := scalar(pk)
	if v == "" {
		return 0, fmt.Errorf("partition of %v: a partition key is a string, a number or a binary value", pk)
	}
	return ix.partition(v), nil
}
