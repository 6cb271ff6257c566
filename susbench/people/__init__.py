"""People as operators: a person at a headed Chromium, with the task's controls outside the page."""
