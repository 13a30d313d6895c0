package store

import (
	"context"
	"time"
)

// Campaign reports read the counters the messages_count_rows trigger keeps (store/schema.sql,
// docs/schema.md) as messages are recorded and their statuses change (campaign_totals,
// campaign_counters per hour, campaign_failures), never a count over messages: a report reads
// at most 32 rows per campaign (a chart 8 per hour shown) whatever the campaign's size.

// StatusCounts is how many messages are in each status now.
type StatusCounts struct {
	Pending   int64 `db:"pending"`
	Sent      int64 `db:"sent"`
	Delivered int64 `db:"delivered"`
	Read      int64 `db:"read"`
	Failed    int64 `db:"failed"`
}

// Total is the sum of the counts.
func (c StatusCounts) Total() int64 { return c.Pending + c.Sent + c.Delivered + c.Read + c.Failed }

// Answered is how many sends the platform has answered (every status but pending).
func (c StatusCounts) Answered() int64 { return c.Sent + c.Delivered + c.Read + c.Failed }

// DeliveryRate is (delivered + read) / answered, 0 when nothing was answered.
func (c StatusCounts) DeliveryRate() float64 { return ratio(c.Delivered+c.Read, c.Answered()) }

// ReadRate is read / answered, 0 when nothing was answered.
func (c StatusCounts) ReadRate() float64 { return ratio(c.Read, c.Answered()) }

func ratio(n, d int64) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// CampaignReport is a campaign with its counts and its first and last send (nil before one).
type CampaignReport struct {
	ID        int64     `db:"id"`
	Name      string    `db:"name"`
	CreatedAt time.Time `db:"created_at"`
	StatusCounts
	FirstSentAt *time.Time `db:"first_at"`
	LastSentAt  *time.Time `db:"last_at"`
}

// FailureReason is one platform error and how many of the campaign's messages failed with it.
type FailureReason struct {
	Code  int    `db:"error_code"` // 0 when the platform gave none
	Title string `db:"error_title"`
	Count int64  `db:"count"`
}

// CampaignBucket is the counts of the messages recorded in one hour or day (Start, UTC).
type CampaignBucket struct {
	Start time.Time `db:"start"`
	StatusCounts
}

const campaignReportColumns = `p.id, p.name, p.created_at,
		COALESCE(sum(k.pending), 0) AS pending, COALESCE(sum(k.sent), 0) AS sent,
		COALESCE(sum(k.delivered), 0) AS delivered, COALESCE(sum(k.read), 0) AS read,
		COALESCE(sum(k.failed), 0) AS failed, min(k.first_at) AS first_at, max(k.last_at) AS last_at`

const (
	campaignByIDSQL = `SELECT ` + campaignReportColumns + `
		FROM campaigns p LEFT JOIN campaign_totals k ON k.account_id = p.account_id AND k.campaign_id = p.id
		WHERE p.account_id = $1 AND p.id = $2
		GROUP BY p.id, p.name, p.created_at`
	failureReasonsSQL = `SELECT error_code, error_title, count FROM campaign_failures
		WHERE account_id = $1 AND campaign_id = $2 AND count > 0
		ORDER BY count DESC, error_code, error_title LIMIT $3`
	campaignSeriesSQL = `SELECT date_trunc($5::text, bucket, $6::text) AS start,
			sum(pending) AS pending, sum(sent) AS sent, sum(delivered) AS delivered, sum(read) AS read, sum(failed) AS failed
		FROM campaign_counters
		WHERE account_id = $1 AND campaign_id = $2 AND bucket >= date_trunc('hour', $3::timestamptz, 'UTC') AND bucket < $4::timestamptz
		GROUP BY 1 HAVING sum(pending + sent + delivered + read + failed) > 0 ORDER BY 1`
)

// Campaigns returns a page of the account's campaigns, newest first (by id), each with its
// counts: at most limit, those with an id below beforeID when it is not 0. It fails only when
// the database does.
func (s *Store) Campaigns(ctx context.Context, accountID int64, beforeID int64, limit int) ([]CampaignReport, error) {
	out := []CampaignReport{}
	return out, s.readMayLag(ctx, false, &out, `SELECT `+campaignReportColumns+`
		FROM (SELECT id, account_id, name, created_at FROM campaigns
			WHERE account_id = $1 AND ($2::bigint = 0 OR id < $2::bigint) ORDER BY id DESC LIMIT $3) p
		LEFT JOIN campaign_totals k ON k.account_id = p.account_id AND k.campaign_id = p.id
		GROUP BY p.id, p.name, p.created_at ORDER BY p.id DESC`, accountID, beforeID, limit)
}

// CampaignByID returns the account's campaign with its counts; ErrNotFound when the account has
// no campaign with that id.
func (s *Store) CampaignByID(ctx context.Context, accountID, id int64) (CampaignReport, error) {
	var r CampaignReport
	err := s.getPrepared(ctx, &r, campaignByIDSQL, accountID, id)
	return r, err
}

// CampaignFailureReasons returns the account's campaign's most frequent failure reasons, most
// frequent first, at most limit (none for another account's campaign). It fails only when the
// database does.
func (s *Store) CampaignFailureReasons(ctx context.Context, accountID, campaignID int64, limit int) ([]FailureReason, error) {
	out := []FailureReason{}
	return out, s.readMayLag(ctx, false, &out, failureReasonsSQL, accountID, campaignID, limit)
}

// CampaignSeriesIn returns the account's campaign's counts per hour or per day (unit "hour" or
// "day") of the messages recorded in [from, to), oldest first, empty buckets left out, with the
// hours and days of the time zone (an IANA name the caller has checked, such as
// "America/Sao_Paulo", or "UTC"): a day bucket starts at the zone's midnight. The counts are the
// current statuses of the messages recorded in each bucket. The counters are kept per UTC
// hour, so in a zone whose offset is not whole hours an hour bucket holds the UTC hour that
// starts within it. It fails only when the database does.
func (s *Store) CampaignSeriesIn(ctx context.Context, accountID, campaignID int64, unit, zone string, from, to time.Time) ([]CampaignBucket, error) {
	if unit != "day" {
		unit = "hour"
	}
	out := []CampaignBucket{}
	return out, s.readMayLag(ctx, false, &out, campaignSeriesSQL, accountID, campaignID, from.UTC(), to.UTC(), unit, zone)
}

// CampaignMessagesAfter returns up to limit of the account's outbound messages in the
// campaign with their contact's name and the ListedMessage fields of a detailed listing, oldest first (by created_at, then id), after the cursor (from the first when
// after is nil). An export reads a campaign through it one chunk per statement, so that no
// connection is held while the chunk is written to a client. It fails only when the database
// does.
func (s *Store) CampaignMessagesAfter(ctx context.Context, accountID, campaignID int64, after *MessageCursor, limit int) ([]ListedMessage, error) {
	out := []ListedMessage{}
	// From the first: a cursor before every row ('-infinity'), so that the one statement
	// always seeks the campaign's index from its cursor.
	at, id := any("-infinity"), int64(0)
	if after != nil {
		at, id = after.CreatedAt.UTC(), after.ID
	}
	return out, s.readMayLag(ctx, false, &out, campaignMessagesAfterSQL, accountID, campaignID, at, id, limit)
}

const campaignMessagesAfterSQL = `SELECT m.id, m.contact_id, m.conversation_id, m.campaign_id, COALESCE(p.name, '') AS campaign_name,
		m.direction, m.type, m.destination, m.template_name, COALESCE(m.platform_message_id, '') AS platform_message_id,
		m.status, m.source, m.error_code, m.error_title, m.error_details, m.created_at, m.sent_at,
		m.client_reference, m.delivered_at, m.read_at,
		COALESCE((m.content->'body_variables')::text, '') AS body_variables,
		COALESCE((m.content->'header_variables')::text, '') AS header_variables,
		COALESCE(c.name, '') AS contact_name, COALESCE(c.mobile, '') AS contact_mobile
	FROM messages m JOIN campaigns p ON p.account_id = m.account_id AND p.id = m.campaign_id
		LEFT JOIN contacts c ON c.account_id = m.account_id AND c.id = m.contact_id
	WHERE m.account_id = $1 AND m.campaign_id = $2 AND m.direction = 'out'
		AND (m.created_at, m.id) > ($3::timestamptz, $4::bigint)
	ORDER BY m.created_at, m.id
	LIMIT $5`
