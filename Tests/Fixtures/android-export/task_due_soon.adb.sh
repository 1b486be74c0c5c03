#!/bin/sh
# pushtrail export: notification a0000000-0000-4000-8000-000000002002 (seq 1, thread task-2002) for an Android emulator, as FCM delivers it
# Needs adb root (run: adb root), which only google_apis emulator images allow (not google_apis_playstore).
# Each run sends a new google.message_id: the Firebase SDK drops a message whose id it has seen.
adb shell am broadcast \
    -n com.tt.honeydue/com.google.firebase.iid.FirebaseInstanceIdReceiver \
    -a com.google.android.c2dm.intent.RECEIVE \
    --es thread_id task-2002 \
    --es category TASK_ACTIONABLE \
    --es title "'Due soon: Replace upstairs HVAC filter'" \
    --es subtitle "'Maple Street House'" \
    --es body "'Replace upstairs HVAC filter is due Thu, Nov 19. Mark it done, start it, or reschedule.'" \
    --es task_id 2002 \
    --es task_name "'Replace upstairs HVAC filter'" \
    --es residence_id 12 \
    --es residence_name "'Maple Street House'" \
    --es due_date 2026-11-19 \
    --es notification_type task_due_soon \
    --es button_types "'[\"complete\",\"cancel\",\"mark_in_progress\"]'" \
    --es is_premium true \
    --es google.message_id "pushtrail-1-$(date +%s)-$$" \
    --es from honeydue-prod
