package queuekit

// Version is the workshop's version: the top entry of CHANGELOG.md (a test
// checks they agree). `queuekit version` prints it and `make workshop` prints
// it when it starts, so an instructor can say which workshop a room used.
const Version = "0.5.0"
