#!/bin/sh
# pushtrail export: notification a0000000-0000-4000-8000-000000002003 (seq 1, thread task-2003) for an Android emulator, as FCM delivers it
# Needs adb root (run: adb root), which only google_apis emulator images allow (not google_apis_playstore).
# Each run sends a new google.message_id: the Firebase SDK drops a message whose id it has seen.
adb shell am broadcast \
    -n com.tt.honeydue/com.google.firebase.iid.FirebaseInstanceIdReceiver \
    -a com.google.android.c2dm.intent.RECEIVE \
    --es thread_id task-2003 \
    --es category TASK_IN_PROGRESS \
    --es title "'In progress: Repaint front door trim'" \
    --es subtitle "'Maple Street House'" \
    --es body "'Ben started this task on Mon, Nov 16. Mark it complete when it'\\''s done.'" \
    --es task_id 2003 \
    --es task_name "'Repaint front door trim'" \
    --es residence_id 12 \
    --es residence_name "'Maple Street House'" \
    --es due_date 2026-11-21 \
    --es notification_type task_in_progress \
    --es button_types "'[\"edit\",\"complete\",\"cancel\"]'" \
    --es is_premium true \
    --es google.message_id "pushtrail-1-$(date +%s)-$$" \
    --es from honeydue-prod
