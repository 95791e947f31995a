package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
)

// KeySchema is how a catalog table keys its items. Every item holds every
// attribute of a job whatever the key, so seeding, GetJob and ScanNight work
// on both; only QueryNight needs batch_date as the partition key.
type KeySchema int

// The key schemas.
const (
	// KeyByNight is the catalog's design: batch_date (HASH) and
	// window_job_id = <requested_window>#<job_id> (RANGE), so one Query reads
	// a night, or one window of it.
	KeyByNight KeySchema = iota
	// KeyByJobID is the naive design: job_id alone (HASH). It answers "get job
	// X" with one GetItem but not "which jobs run tonight?": with batch_date
	// outside the key, reading a night takes a Scan of the whole table.
	KeyByJobID
)

func (k KeySchema) String() string {
	switch k {
	case KeyByNight:
		return queuekit.AttrBatchDate + " (HASH), " + queuekit.AttrWindowJobID + " (RANGE)"
	case KeyByJobID:
		return queuekit.AttrJobID + " (HASH)"
	}
	return fmt.Sprintf("key schema %d", int(k))
}

// elements are the key attributes with their key types.
func (k KeySchema) elements() []types.KeySchemaElement {
	if k == KeyByJobID {
		return []types.KeySchemaElement{{AttributeName: aws.String(queuekit.AttrJobID), KeyType: types.KeyTypeHash}}
	}
	return []types.KeySchemaElement{
		{AttributeName: aws.String(queuekit.AttrBatchDate), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String(queuekit.AttrWindowJobID), KeyType: types.KeyTypeRange},
	}
}

func (k KeySchema) definitions() []types.AttributeDefinition {
	var out []types.AttributeDefinition
	for _, e := range k.elements() {
		out = append(out, types.AttributeDefinition{AttributeName: e.AttributeName, AttributeType: types.ScalarAttributeTypeS})
	}
	return out
}

// key is the primary key of a job's item under this schema.
func (k KeySchema) key(j queuekit.Job) map[string]types.AttributeValue {
	if k == KeyByJobID {
		return map[string]types.AttributeValue{queuekit.AttrJobID: &types.AttributeValueMemberS{Value: j.JobID}}
	}
	return map[string]types.AttributeValue{
		queuekit.AttrBatchDate:   &types.AttributeValueMemberS{Value: j.BatchDate},
		queuekit.AttrWindowJobID: &types.AttributeValueMemberS{Value: j.WindowJobID},
	}
}

// ErrNoSuchJob is wrapped by GetJob when the table holds no job with the id.
var ErrNoSuchJob = errors.New("no such job")

// GetJob reads one job by its id. With KeyByJobID that is one GetItem, the
// one question that key answers well. With KeyByNight and WithJobIndex it is
// one Query of the index JobIndex. With KeyByNight alone the id's date
// (JOB-<yyyymmdd>-<seq>) names the partition: one Query of that night with a
// filter on job_id. LookupJob says which, and what it cost. A job that is
// not there gives an error wrapping ErrNoSuchJob.
func (c *Catalog) GetJob(ctx context.Context, jobID string) (queuekit.Job, error) {
	j, _, err := c.LookupJob(ctx, jobID)
	return j, err
}

// PaddingBytes returns the size of the padding attribute (see WithPadding) of
// the job's item: 0 when it has none.
func (c *Catalog) PaddingBytes(ctx context.Context, jobID string) (int, error) {
	item, _, err := c.lookup(ctx, jobID)
	if err != nil {
		return 0, err
	}
	if pad, ok := item[AttrPadding].(*types.AttributeValueMemberS); ok {
		return len(pad.Value), nil
	}
	return 0, nil
}

// jobDate turns JOB-20260513-007 into 2026-05-13.
func jobDate(jobID string) (string, bool) {
	parts := strings.Split(jobID, "-")
	if len(parts) != 3 || parts[0] != "JOB" || len(parts[1]) != 8 {
		return "", false
	}
	d := parts[1][:4] + "-" + parts[1][4:6] + "-" + parts[1][6:]
	if _, err := queuekit.ParseBatchDate(d); err != nil {
		return "", false
	}
	return d, true
}
