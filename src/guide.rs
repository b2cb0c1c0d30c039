//! A guide to containment domains (placeholder, written below).
