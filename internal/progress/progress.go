// Package progress holds the figures of an account's migration in one
// type: the copy engine counts in it, the domain adds it up, storage keeps
// it in events and the API shows it (api/openapi.yaml's Progress is this
// type, by x-go-type). Its JSON is the API's.
package progress

import "encoding/json"

// Figures count what the migration of one account has done in its pass.
type Figures struct {
	FoldersTotal    int64
	FoldersDone     int64
	MessagesTotal   int64 // messages planned for copying so far
	MessagesCopied  int64
	MessagesSkipped int64 // present already, or left out by the options
	MessagesFailed  int64 // refused by the destination
	BytesCopied     int64
	// SourceMessages and SourceBytes are the size of the source folders
	// the migration copies, counted as it began or by a login test
	// (SourceCounted): the total that copied, skipped and failed messages
	// make up by the end.
	SourceCounted  bool
	SourceMessages int64
	SourceBytes    int64
}

// wire is the JSON of Figures: the source's size is null until counted.
type wire struct {
	FoldersTotal    int64  `json:"folders_total"`
	FoldersDone     int64  `json:"folders_done"`
	MessagesTotal   int64  `json:"messages_total"`
	MessagesCopied  int64  `json:"messages_copied"`
	MessagesSkipped int64  `json:"messages_skipped"`
	MessagesFailed  int64  `json:"messages_failed"`
	BytesCopied     int64  `json:"bytes_copied"`
	SourceMessages  *int64 `json:"source_messages"`
	SourceBytes     *int64 `json:"source_bytes"`
	// SourceCounted is read alone: events stored before the figures had
	// one JSON said so, and left a zero count out.
	SourceCounted bool `json:"source_counted,omitempty"`
}

// MarshalJSON writes the API's Progress.
func (f Figures) MarshalJSON() ([]byte, error) {
	w := wire{FoldersTotal: f.FoldersTotal, FoldersDone: f.FoldersDone, MessagesTotal: f.MessagesTotal,
		MessagesCopied: f.MessagesCopied, MessagesSkipped: f.MessagesSkipped, MessagesFailed: f.MessagesFailed,
		BytesCopied: f.BytesCopied}
	if f.SourceCounted {
		w.SourceMessages, w.SourceBytes = &f.SourceMessages, &f.SourceBytes
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the API's Progress, and the figures of events stored
// before it was the events' too.
func (f *Figures) UnmarshalJSON(data []byte) error {
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*f = Figures{FoldersTotal: w.FoldersTotal, FoldersDone: w.FoldersDone, MessagesTotal: w.MessagesTotal,
		MessagesCopied: w.MessagesCopied, MessagesSkipped: w.MessagesSkipped, MessagesFailed: w.MessagesFailed,
		BytesCopied: w.BytesCopied, SourceCounted: w.SourceCounted || w.SourceMessages != nil}
	if w.SourceMessages != nil {
		f.SourceMessages = *w.SourceMessages
	}
	if w.SourceBytes != nil {
		f.SourceBytes = *w.SourceBytes
	}
	return nil
}
