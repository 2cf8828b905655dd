package transfer

// figures keeps an account's counts per folder, so that a folder taken up
// again after a reconnect replaces what its earlier attempt planned,
// skipped and saw refused (all of that is looked at again) instead of
// adding to it, while what it copied stays counted: the account's figures
// describe the whole pass, however many attempts it took.
type figures struct {
	progress *Progress
	folders  map[string]*folderFigures
}

type folderFigures struct {
	planned, copied, skipped, failed int64
	// present counts the messages found mapped and on the destination;
	// those copied by this migration's earlier attempts (copiedBefore)
	// among them are counted as copied, not as skipped.
	present, copiedBefore int64
}

// presentSkipped is what present adds to the skipped messages.
func (ff *folderFigures) presentSkipped() int64 { return max(0, ff.present-ff.copiedBefore) }

func newFigures(p *Progress) figures {
	return figures{progress: p, folders: map[string]*folderFigures{}}
}

func (f figures) of(folder string) *folderFigures {
	ff := f.folders[folder]
	if ff == nil {
		ff = &folderFigures{}
		f.folders[folder] = ff
	}
	return ff
}

// restart begins an attempt at folder: what it copied before counts as
// planned, the rest is counted again.
func (f figures) restart(folder string) {
	ff := f.of(folder)
	f.progress.MessagesTotal -= ff.planned - ff.copied
	f.progress.MessagesSkipped -= ff.skipped + ff.presentSkipped()
	f.progress.MessagesFailed -= ff.failed
	ff.planned, ff.skipped, ff.failed = ff.copied, 0, 0
	ff.present, ff.copiedBefore = 0, ff.copied
}

// found counts n messages of folder found on the destination by the map.
func (f figures) found(folder string, n int) {
	ff := f.of(folder)
	before := ff.presentSkipped()
	ff.present += int64(n)
	f.progress.MessagesSkipped += ff.presentSkipped() - before
}

// plan counts n more messages to copy in folder.
func (f figures) plan(folder string, n int) {
	f.of(folder).planned += int64(n)
	f.progress.MessagesTotal += int64(n)
}

// skip counts n messages of folder present already or left out.
func (f figures) skip(folder string, n int) {
	f.of(folder).skipped += int64(n)
	f.progress.MessagesSkipped += int64(n)
}

// copied counts one message copied to folder.
func (f figures) copied(folder string, size int64) {
	f.of(folder).copied++
	f.progress.MessagesCopied++
	f.progress.BytesCopied += size
}

// failed counts one message of folder refused or unreadable.
func (f figures) failed(folder string) {
	f.of(folder).failed++
	f.progress.MessagesFailed++
}
