#include <nats/nats.h>

/* The header JetStream reads an event's id from to drop a message it already holds
   (within the stream's duplicate window); nats.h keeps its name private. */
static const char *const pushtrail_nats_msg_id = "Nats-Msg-Id";
