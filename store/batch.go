package store

import (
	"encoding/json"
)

// One way to pass a batch. A statement that writes or reads many rows at once (the group
// commits of sends, recordings and status reports, a dispatcher's attempts, a template sync's
// categories) takes them as one argument: a JSON array of objects, one per row, read with
// jsonb_to_recordset($1::jsonb) AS r (column type, ...). Each row is a Go struct whose json tags
// name the columns, with its position i (from 1) where the answer must come back in order.
//
// JSON rather than parallel arrays and unnest: a row is one value, so its columns cannot fall
// out of step the way the n-th elements of eleven arrays can, and its nulls and bytes have one
// spelling (null; base64 for bytea, decoded in the statement); and PostgreSQL estimates a JSON
// row set the same whatever its value, so no batch size gives the planner a reason to prefer a
// custom plan (the recording statement once spent a third of its time planning with arrays).
// TestBatchStatementsPlanGenerically checks that each batch statement settles on its generic
// plan. A list of values of one kind (ids to leave out, the forms of a mobile) is not a batch
// of rows and stays an array (= ANY($1)).

// jsonArg is v as a JSON statement argument.
func jsonArg(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
