package queuekit

// Status is a job's execution_status in seed 003's state machine, the
// value both executors (lease and fleet) write on a job item.
type Status string

// The execution states of seed 003, in the order of the state machine.
const (
	StatusNotStarted       Status = "NOT_STARTED"
	StatusClaimed          Status = "CLAIMED"
	StatusProcessing       Status = "PROCESSING"
	StatusSuccess          Status = "SUCCESS"
	StatusRetriableFailure Status = "RETRIABLE_FAILURE"
	StatusFatalFailure     Status = "FATAL_FAILURE"
)

// Values returns the statuses in the order of the state machine. The slice
// is new at every call, as the enums of aws-sdk-go-v2 return theirs.
func (Status) Values() []Status {
	return []Status{
		StatusNotStarted,
		StatusClaimed,
		StatusProcessing,
		StatusSuccess,
		StatusRetriableFailure,
		StatusFatalFailure,
	}
}
