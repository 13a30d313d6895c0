-- A template keeps a rejection reason only while REJECTED, and "NONE" (the platform's word for
-- a template that was not rejected) is no reason: the sync now stores what the status webhook
-- stores (store.keptRejectionReason), and the rows synced before are brought in line.
UPDATE templates SET rejected_reason = ''
WHERE rejected_reason <> '' AND (status <> 'REJECTED' OR upper(btrim(rejected_reason)) = 'NONE');
