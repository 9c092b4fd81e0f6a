"""Small modal questions any part of the app may ask: yes or no (`confirm`), a reason for a
rejection (`reason`)."""
