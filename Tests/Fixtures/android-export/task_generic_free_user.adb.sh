#!/bin/sh
# pushtrail export: notification a0000000-0000-4000-8000-000000002007 (seq 1, thread task-2007) for an Android emulator, as FCM delivers it
# Needs adb root (run: adb root), which only google_apis emulator images allow (not google_apis_playstore).
# Each run sends a new google.message_id: the Firebase SDK drops a message whose id it has seen.
adb shell am broadcast \
    -n com.tt.honeydue/com.google.firebase.iid.FirebaseInstanceIdReceiver \
    -a com.google.android.c2dm.intent.RECEIVE \
    --es thread_id task-2007 \
    --es category TASK_NOTIFICATION_GENERIC \
    --es title "'Task reminder'" \
    --es subtitle honeyDue \
    --es body "'You have a task due soon.'" \
    --es task_id 2007 \
    --es task_name "'Descale shower head'" \
    --es residence_id 41 \
    --es residence_name "'Elm Court Apartment'" \
    --es due_date 2026-11-20 \
    --es notification_type task_generic \
    --es button_types "''" \
    --es is_premium false \
    --es google.message_id "pushtrail-1-$(date +%s)-$$" \
    --es from honeydue-prod
