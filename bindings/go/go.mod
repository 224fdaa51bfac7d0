module agbind/ag

go 1.24
