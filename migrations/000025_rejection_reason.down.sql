-- Nothing to undo: the reasons cleared were "NONE" or belonged to templates not rejected.
SELECT 1;
