package domain

// DefaultCampaign is the campaign the send path gives sends that name none; the dashboard
// shows it as "No campaign".
const DefaultCampaign = "API"
