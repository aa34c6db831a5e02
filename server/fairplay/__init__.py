"""Fair play: the screen of finished games (`screen`, pure) and the review desk (`review`)."""
