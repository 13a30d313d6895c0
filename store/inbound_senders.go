package store

import "sync"

// The contacts of recent senders, so that the next message of the same sender skips the
// contacts' read and is one statement. An entry is kept only for a contact that holds every
// identifier the message gave (its mobile is the message's number, its user id the message's
// user id), for which the identity rules find that contact whatever other contacts hold
// (identityFor); the statement checks that the contact's row is still as kept
// (inboundMessageSQL's k), and a row that changed, or a message whose contact needs a write,
// drops the entry and reads the contacts again. Entries are per process: another gateway's
// changes are caught by that check as well. What a message changes on its contact
// (contactWrites) decides between that statement and RecordInbound's transaction.

// senderMax bounds the senders kept; past it the cache starts over.
const senderMax = 10000

type senderKey struct {
	account      int64
	from, userID string
}

type senderCache struct {
	mu sync.Mutex
	m  map[senderKey]identityRow
}

func senderKeyOf(accountID int64, in InboundMessage) senderKey {
	return senderKey{account: accountID, from: in.From, userID: in.UserID}
}

// get returns the kept contact of k.
func (c *senderCache) get(k senderKey) (identityRow, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[k]
	return r, ok
}

// put keeps r for k when r holds every identifier of k.
func (c *senderCache) put(k senderKey, r identityRow) {
	if (k.from != "" && r.Mobile.String != k.from) || (k.userID != "" && r.UserID.String != k.userID) {
		return
	}
	r.Created = false
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= senderMax {
		c.m = map[senderKey]identityRow{}
	}
	c.m[k] = r
}

func (c *senderCache) drop(k senderKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
}

// contactWrites is what recording a message changes on its sender's contact besides identity.
type contactWrites struct {
	alias  bool // From is another form of the contact's mobile: kept as an alias
	block  bool // Block changes the contact's block
	update bool // the name, the block or the username changes
}

func contactWritesFor(in InboundMessage, c identityRow) contactWrites {
	w := contactWrites{alias: in.From != "" && c.Mobile.String != in.From, block: in.Block != nil && *in.Block != c.Blocked}
	w.update = w.block || (c.Name == "" && in.ProfileName != "") || (in.Username != "" && c.Username.String != in.Username)
	return w
}
