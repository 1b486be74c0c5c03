#!/bin/sh
# pushtrail export: notification a0000000-0000-4000-8000-000000002004 (seq 1, thread task-2004) for an Android emulator, as FCM delivers it
# Needs adb root (run: adb root), which only google_apis emulator images allow (not google_apis_playstore).
# Each run sends a new google.message_id: the Firebase SDK drops a message whose id it has seen.
adb shell am broadcast \
    -n com.tt.honeydue/com.google.firebase.iid.FirebaseInstanceIdReceiver \
    -a com.google.android.c2dm.intent.RECEIVE \
    --es thread_id task-2004 \
    --es category TASK_CANCELLED \
    --es title "'Cancelled: Power-wash back deck'" \
    --es subtitle "'Lakeview Cabin'" \
    --es body "'Dana cancelled this task. You can restore it or delete it.'" \
    --es task_id 2004 \
    --es task_name "'Power-wash back deck'" \
    --es residence_id 27 \
    --es residence_name "'Lakeview Cabin'" \
    --es due_date 2026-11-14 \
    --es notification_type task_cancelled \
    --es button_types uncancel,delete \
    --es is_premium true \
    --es google.message_id "pushtrail-1-$(date +%s)-$$" \
    --es from honeydue-prod
