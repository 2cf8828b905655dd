// Package imapconn is the copy engine's connection layer: a side and how
// it logs in (a password, a master login, an OAuth 2.0 token), one
// session per side on go-imap's client, the hand-written commands that
// go-imap v2 lacks (MULTIAPPEND, LSUB) on that session's own connection,
// modified UTF-7 folder names, and the classification of failures and
// throttling answers into kinds the engine decides on. It knows nothing of
// folders, UID maps or sync state: those are the engine's (transfer).
package imapconn
