package queuekit

// Progress is what long work reports while it runs: Done of Total steps
// (Total 0 when the total is not known yet) and Note, a short phrase about
// the present state ("3 running, minute 41.5"), empty when there is nothing
// to add to the count.
//
// It is the one progress shape of this module: every long operation takes a
// func(Progress), calls it from the goroutine doing the work, a few times a
// second at most, and never while holding a server call open, so the
// callback may print or update a notebook (lab.Progress.Report) but should
// return quickly.
type Progress struct {
	Done, Total int
	Note        string
}
