// Package query is the one filter language of the lists, typed in the
// console's "/" and given to the command line's --filter:
//
//	state:reserved amount:>100 amount:50..200 created:<7d
//	created:2026-11-01..2026-11-20 customer:müller email:shop.example
//	operator:alice service:deferredkp word "two words"
//
// Parse turns the text into a Query, naming the field and the rule of
// what it refuses; each list then says which fields apply to it (Check).
// The lists' engines evaluate the parsed Query, never the text.
package query
