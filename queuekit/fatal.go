package queuekit

import "errors"

// FatalError marks a job's work error that no retry can fix: both
// executors (lease, fleet) end the job FATAL_FAILURE at once instead of
// retrying it.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return "fatal: " + e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Fatal wraps err so that the job ends FATAL_FAILURE at once.
func Fatal(err error) error { return &FatalError{err} }

// IsFatal reports whether err, or an error it wraps, was marked with Fatal.
func IsFatal(err error) bool {
	var f *FatalError
	return errors.As(err, &f)
}
