//! Golden-vector round trips.
