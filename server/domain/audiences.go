package domain

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"gateway/store"
)

// Audiences: contact tags, and saved audiences (contacts with every one of a set of tags) that
// a broadcast sends to.

// Audiences tags contacts and keeps the account's saved audiences.
type Audiences struct {
	Store *store.Store
}

// ErrInvalidTag refuses a tag that is empty, longer than MaxTagLength, or holds a control
// character; ErrInvalidAudience an audience name that is empty or longer than
// MaxAudienceNameLength, or a filter without a tag.
var (
	ErrInvalidTag      = errors.New("a tag has 1 to 100 characters and no control characters")
	ErrInvalidAudience = errors.New("an audience has a name of 1 to 200 characters and at least one tag")
)

// Bounds of tags and audience names (the columns' checks).
const (
	MaxTagLength          = 100
	MaxAudienceNameLength = 200
)

// CheckTag trims the tag and checks it; an empty tag is accepted only when optional (it then
// means none).
func CheckTag(tag string, optional bool) (string, error) {
	tag = strings.TrimSpace(tag)
	if tag == "" && optional {
		return "", nil
	}
	if !printable(tag, MaxTagLength) {
		return "", ErrInvalidTag
	}
	return tag, nil
}

func printable(s string, maxRunes int) bool {
	n := utf8.RuneCountInString(s)
	if n == 0 || n > maxRunes || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// Tag gives the tag to the contacts (ids of another account are ignored) and returns how many
// gained it; with untag it takes the tag away and returns how many lost it.
func (a Audiences) Tag(ctx context.Context, accountID int64, tag string, ids []int64, untag bool) (int64, error) {
	tag, err := CheckTag(tag, false)
	if err != nil {
		return 0, err
	}
	if untag {
		return a.Store.UntagContacts(ctx, accountID, tag, ids)
	}
	return a.Store.TagContacts(ctx, accountID, tag, ids)
}

// TagListing is Tag for every contact of a listing: those with filterTag whose name or number
// contains search, or every contact when filterTag is "" (store.TagListing).
func (a Audiences) TagListing(ctx context.Context, accountID int64, filterTag, search, tag string, untag bool) (int64, error) {
	tag, err := CheckTag(tag, false)
	if err != nil {
		return 0, err
	}
	if untag {
		return a.Store.UntagListing(ctx, accountID, filterTag, search, tag)
	}
	return a.Store.TagListing(ctx, accountID, filterTag, search, tag)
}

// CountedAudience is a saved audience and how many contacts it selects now.
type CountedAudience struct {
	store.Audience
	Contacts int
}

// List returns the account's saved audiences with their counts, in name order.
func (a Audiences) List(ctx context.Context, accountID int64) ([]CountedAudience, error) {
	as, err := a.Store.Audiences(ctx, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]CountedAudience, 0, len(as))
	for _, au := range as {
		n, err := a.Store.AudienceCount(ctx, accountID, au.Filter)
		if err != nil {
			return nil, err
		}
		out = append(out, CountedAudience{Audience: au, Contacts: n})
	}
	return out, nil
}

// Save keeps a named audience of the contacts with every one of the tags (blocked contacts
// left out); a name in use fails with store.ErrConflict.
func (a Audiences) Save(ctx context.Context, accountID int64, name string, tags []string) (store.Audience, error) {
	name = strings.TrimSpace(name)
	if !printable(name, MaxAudienceNameLength) || len(tags) == 0 {
		return store.Audience{}, ErrInvalidAudience
	}
	clean := make([]string, 0, len(tags))
	for _, t := range tags {
		t, err := CheckTag(t, false)
		if err != nil {
			return store.Audience{}, err
		}
		clean = append(clean, t)
	}
	return a.Store.SaveAudience(ctx, accountID, name, store.AudienceFilter{Tags: clean})
}

// Delete deletes the account's saved audience; store.ErrNotFound for another account's.
func (a Audiences) Delete(ctx context.Context, accountID, id int64) error {
	return a.Store.DeleteAudience(ctx, accountID, id)
}
