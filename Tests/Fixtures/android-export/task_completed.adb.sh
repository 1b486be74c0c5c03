#!/bin/sh
# pushtrail export: notification a0000000-0000-4000-8000-000000002005 (seq 1, thread task-2005) for an Android emulator, as FCM delivers it
# Needs adb root (run: adb root), which only google_apis emulator images allow (not google_apis_playstore).
# Each run sends a new google.message_id: the Firebase SDK drops a message whose id it has seen.
adb shell am broadcast \
    -n com.tt.honeydue/com.google.firebase.iid.FirebaseInstanceIdReceiver \
    -a com.google.android.c2dm.intent.RECEIVE \
    --es thread_id task-2005 \
    --es category TASK_COMPLETED \
    --es title "'Completed: Flush water heater'" \
    --es subtitle "'Maple Street House'" \
    --es body "'Alice marked this task complete on Tue, Nov 10.'" \
    --es task_id 2005 \
    --es task_name "'Flush water heater'" \
    --es residence_id 12 \
    --es residence_name "'Maple Street House'" \
    --es due_date 2026-11-10 \
    --es notification_type task_completed \
    --es button_types "'[]'" \
    --es is_premium true \
    --es google.message_id "pushtrail-1-$(date +%s)-$$" \
    --es from honeydue-prod
