package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"

	"gateway/platform/simulator"
	"gateway/server/servertest"
	"gateway/store"
)

// The campaign report property: after a randomized run of sends through the API (some refused
// by the platform) under random campaign names, and status reports for them arriving shuffled,
// duplicated and concurrently through the signed platform webhook (failures with random
// reasons), GET /campaigns/{id} and GET /campaigns show for every campaign exactly what a count
// over its messages shows, and what the model of the run predicts; the failure reasons too.
func TestCampaignCountsProperty(t *testing.T) {
	seed := uint64(20261123)
	if s := os.Getenv("CAMPAIGN_PROPERTY_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = n
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	env := servertest.New(t, servertest.Config{Simulator: quietSim()})
	tn := env.NewTenant("Prop Ltd")
	conn := env.ConnectNumber(tn)
	if _, err := env.Server.SyncTemplates(context.Background(), tn.Account.ID); err != nil {
		t.Fatal(err)
	}
	// Two numbers the platform refuses at once.
	refused := map[string]int{"15550200001": 131026, "15550200002": 131056}
	for to, code := range refused {
		env.Sim.Script(to, simulator.Outcome{FailSync: code})
	}
	numbers := []string{"15550200001", "15550200002"}
	for i := range 10 {
		numbers = append(numbers, fmt.Sprintf("155502001%02d", i))
	}
	campaigns := []string{"", "Spring", "Autumn"}

	type sent struct {
		id, campaign int64
		wamid        string
		final        string
	}
	var msgs []*sent
	campaignIDs := map[int64]bool{}
	for range 80 {
		to := numbers[r.IntN(len(numbers))]
		body := map[string]any{"destination": to, "template_name": "order_confirmation", "body_variables": []string{"Ana", "ORD-7781"}}
		if c := campaigns[r.IntN(len(campaigns))]; c != "" {
			body["campaign_name"] = c
		}
		resp := send(env, tn.Live, body)
		if _, ok := refused[to]; ok {
			mustFail(t, resp, http.StatusBadGateway, "platform_rejected")
			continue
		}
		var d struct {
			MessageID     int64  `json:"message_id"`
			ChatMessageID string `json:"chat_message_id"`
			CampaignID    int64  `json:"campaign_id"`
		}
		mustOK(t, resp, &d)
		msgs = append(msgs, &sent{id: d.MessageID, campaign: d.CampaignID, wamid: d.ChatMessageID, final: "sent"})
		campaignIDs[d.CampaignID] = true
	}
	if len(campaignIDs) != len(campaigns) || len(msgs) < 40 {
		t.Fatalf("seed %d: the run used %d campaigns and %d accepted sends", seed, len(campaignIDs), len(msgs))
	}

	// Reports: for each message a random subset of statuses, each one to three times; all of
	// them shuffled together.
	type report struct {
		m      *sent
		status string
		code   int
	}
	var reports []report
	reasons := []int{131026, 131049, 131047}
	for _, m := range msgs {
		code := reasons[r.IntN(len(reasons))]
		for _, s := range []string{"sent", "delivered", "read", "failed"} {
			if r.IntN(2) == 0 {
				continue
			}
			for range 1 + r.IntN(3) {
				reports = append(reports, report{m, s, code})
			}
			if store.StatusRank(s) > store.StatusRank(m.final) {
				m.final = s
			}
		}
	}
	r.Shuffle(len(reports), func(i, j int) { reports[i], reports[j] = reports[j], reports[i] })
	var batches [][]map[string]any
	for left := reports; len(left) > 0; {
		k := min(len(left), 1+r.IntN(4))
		var b []map[string]any
		for _, rep := range left[:k] {
			st := pwStatus(rep.m.wamid, rep.status, 1767268800+int64(store.StatusRank(rep.status)))
			if rep.status == "failed" {
				st["errors"] = []any{map[string]any{"code": rep.code, "title": fmt.Sprintf("Reason %d", rep.code),
					"error_data": map[string]any{"details": "details"}}}
			}
			b = append(b, st)
		}
		batches = append(batches, b)
		left = left[k:]
	}
	work := make(chan []map[string]any)
	errs := make(chan error, len(batches))
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				if err := propPost(env, conn, b); err != nil {
					errs <- err
				}
			}
		}()
	}
	for _, b := range batches {
		work <- b
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("seed %d: %v", seed, err)
	}

	// The model's counts per campaign: accepted sends at their highest reported rank; refused
	// sends are failed and counted under the campaign the send named.
	model := map[int64]*campaignCounts{}
	for id := range campaignIDs {
		model[id] = &campaignCounts{}
	}
	for _, m := range msgs {
		c := model[m.campaign]
		c.Total++
		switch m.final {
		case "sent":
			c.Sent++
		case "delivered":
			c.Delivered++
		case "read":
			c.Read++
		case "failed":
			c.Failed++
		}
	}
	listed := map[int64]campaignData{}
	for _, c := range listCampaigns(t, env, tn.Live, "limit=200").Campaigns {
		listed[c.ID] = c
	}
	for id := range campaignIDs {
		got := getCampaign(t, env, tn.Live, id)
		direct := directCampaignCounts(t, env, tn.Account.ID, id)
		m := *model[id]
		// Refused sends are failed in the database but not in the model of accepted sends.
		refusedHere := direct.Failed - m.Failed
		m.Failed += refusedHere
		m.Total += refusedHere
		if got.Counts != direct || direct != m || listed[id].Counts != direct {
			t.Errorf("seed %d: campaign %d (%s): report %+v, listing %+v, direct count %+v, model %+v",
				seed, id, got.Name, got.Counts, listed[id].Counts, direct, m)
		}
		var want []failureReason
		if err := env.Store.DB().Select(&want, `SELECT COALESCE(error_code, 0) AS code, COALESCE(error_title, '') AS title, count(*) AS count
			FROM messages WHERE account_id = $1 AND campaign_id = $2 AND status = 'failed'
			GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 5`, tn.Account.ID, id); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got.FailureReasons) != fmt.Sprint(want) {
			t.Errorf("seed %d: campaign %d failure reasons %v, direct %v", seed, id, got.FailureReasons, want)
		}
	}
	if n := pwCount(t, env, `SELECT count(*) FROM parked_statuses`); n != 0 {
		t.Fatalf("seed %d: %d statuses left parked", seed, n)
	}
}
