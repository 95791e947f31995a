package chart_test

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit/chart"
)

func ExampleLines() {
	c, err := chart.Lines("Cost per day", "jobs per day", "USD per day", []chart.Series{
		{Name: "on demand", X: []float64{1e6, 1e8}, Y: []float64{3.83, 383}},
		{Name: "provisioned", X: []float64{1e6, 1e8}, Y: []float64{1.1064, 110.64}},
	}, chart.LogX(), chart.LogY())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(c.Markdown())
	// Output:
	// **Cost per day**
	//
	// | jobs per day | on demand | provisioned |
	// |---|---|---|
	// | 1,000,000 | 3.83 | 1.11 |
	// | 100,000,000 | 383 | 110.64 |
}

func ExampleBars() {
	c, err := chart.Bars("Hottest partition key", "WCU/s", []string{"batch_date", "8 shards"},
		[]chart.Series{{Name: "WCU/s", Y: []float64{4629.63, 578.7}}}, chart.Target(1000))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(c.Markdown())
	// Output:
	// **Hottest partition key**
	//
	// |  | WCU/s |
	// |---|---|
	// | batch\_date | 4,629.63 |
	// | 8 shards | 578.7 |
}
